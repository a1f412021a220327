/**
 * The normalised, lower-case form of text that file search compares, computed in the application so
 * that SQLite (whose lower() and LIKE fold ASCII only) and PostgreSQL (whose lower() depends on the
 * database's locale) match exactly the same way: "ÄRGER" finds "ärger.txt" on both.
 *
 * NFKC folds compatibility forms (the "ﬁ" ligature, full-width letters); upper-casing before
 * lower-casing applies the full case mappings ("ß" and "SS" both become "ss"); final sigma and the
 * dotted capital I are reduced to their plain forms. Stored in `files.searchName` / `files.searchOcr`
 * (migration 0006-listing) wherever a name or OCR text is written, and applied to the search term.
 * Stored values depend on it: a change here needs a migration that refolds them (0006 folded the rows
 * of its time with its own frozen copy, 0036-search-refold those of the second pass).
 */
export function foldForSearch(text: string): string {
  return foldOnce(foldOnce(text));
}

/**
 * One pass is not closed under case: the capital sharp s "ẞ" folds to "ß", which folds to "ss", and
 * Greek letters with dialytika and tonos fold to decomposed forms their capitals do not. A second
 * pass, each ending in NFKC, folds every code point, its upper and its lower case alike (checked
 * over every code point in test/unit/search-folding.test.ts; migration 0036-search-refold).
 */
function foldOnce(text: string): string {
  return text.normalize('NFKC').toUpperCase().toLowerCase().replaceAll('ς', 'σ').replaceAll('i\u0307', 'i').normalize('NFKC');
}
