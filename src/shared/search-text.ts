/**
 * The normalised, lower-case form of text that file search compares, computed in the application so
 * that SQLite (whose lower() and LIKE fold ASCII only) and PostgreSQL (whose lower() depends on the
 * database's locale) match exactly the same way: "ÄRGER" finds "ärger.txt" on both.
 *
 * NFKC folds compatibility forms (the "ﬁ" ligature, full-width letters); upper-casing before
 * lower-casing applies the full case mappings ("ß" and "SS" both become "ss"); final sigma and the
 * dotted capital I are reduced to their plain forms. Then accents and strokes go ("cafe" finds
 * "Café", "lodz" finds "Łódź"), and invisible format characters. Last, every run of white space and underscores
 * becomes one space: a stored name has `_` where its uploader typed a space (`data sheet.csv` is kept
 * as `data_sheet.csv`), recognised text has spaces and line breaks, and people type either, so
 * "data sheet", "data_sheet" and "DATA  SHEET" all find both.
 *
 * Stored in `files.searchName` / `files.searchOcr` (migration 0006-listing) wherever a name or OCR
 * text is written, and applied to the search term. Stored values depend on it: a change here needs a
 * migration that refolds them (0006 folded the rows of its time with its own frozen copy,
 * 0036-search-refold those of the second pass, 0037-search-spaces those before spaces were folded,
 * 0039-search-accents those before accents were).
 */
export function foldForSearch(text: string): string {
  return withoutAccents(foldOnce(foldOnce(text))).replace(/[\s_]+/gu, ' ');
}

// The combining marks of the Latin, Greek and Cyrillic alphabets (the blocks of combining diacritical
// marks): the accents people leave out when they type. Marks that are letters' own parts in other
// scripts (Devanagari's vowel signs, the Japanese voicing marks, Hebrew and Arabic points) stay.
const ACCENTS = /[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]/g;
// Letters with a stroke or a ligature, which no decomposition takes apart, as people type them
// without the keyboard that has them: "lodz" finds "Łódź", "oresund" "Øresund".
const PLAIN_LETTERS: Record<string, string> = { Ł: 'L', ł: 'l', Ø: 'O', ø: 'o', Đ: 'D', đ: 'd', Ħ: 'H', ħ: 'h', Ŧ: 'T', ŧ: 't', ı: 'i', Æ: 'AE', æ: 'ae', Œ: 'OE', œ: 'oe', ß: 'ss' };

/** `text` with its letters of a stroke or a ligature as plain ones, case kept (`Łódź` → `Lódz`). */
export const withPlainLetters = (text: string): string => text.replace(/[ŁłØøĐđĦħŦŧıÆæŒœß]/g, (letter) => PLAIN_LETTERS[letter]!);

/**
 * Accents, strokes and the invisible format characters go (migration 0039-search-accents): "cafe"
 * finds "Café", and a name pasted with the joiners of its emoji or words finds it, as stored before
 * file names kept them (docs/decisions.md, "Format characters in file names").
 */
function withoutAccents(text: string): string {
  return withPlainLetters(text.normalize('NFD').replace(ACCENTS, ''))
    .replace(/\p{Cf}/gu, '')
    .normalize('NFC');
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
