/**
 * The normalised, lower-case form of text that file search compares, computed in the application so
 * that SQLite (whose lower() and LIKE fold ASCII only) and PostgreSQL (whose lower() depends on the
 * database's locale) match exactly the same way: "ÄRGER" finds "ärger.txt" on both.
 *
 * NFKC folds compatibility forms (the "ﬁ" ligature, full-width letters); upper-casing before
 * lower-casing applies the full case mappings ("ß" and "SS" both become "ss"); final sigma and the
 * dotted capital I are reduced to their plain forms. Last, every run of white space and underscores
 * becomes one space: a stored name has `_` where its uploader typed a space (`data sheet.csv` is kept
 * as `data_sheet.csv`), recognised text has spaces and line breaks, and people type either, so
 * "data sheet", "data_sheet" and "DATA  SHEET" all find both.
 *
 * Stored in `files.searchName` / `files.searchOcr` (migration 0006-listing) wherever a name or OCR
 * text is written, and applied to the search term. Stored values depend on it: a change here needs a
 * migration that refolds them (0006 folded the rows of its time with its own frozen copy,
 * 0036-search-refold those of the second pass, 0037-search-spaces those before spaces were folded).
 */
export function foldForSearch(text: string): string {
  return foldOnce(foldOnce(text)).replace(/[\s_]+/gu, ' ');
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
