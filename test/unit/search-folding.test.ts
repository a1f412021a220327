import { describe, expect, it } from 'vitest';
import { foldForSearch } from '../../src/shared/search-text.ts';
import { followingPrefix } from '../../src/listing/file-query.ts';
import { foldForSearch as migration0006Fold } from '../../src/db/migrations/0006-listing.ts';
import { foldForSearch as migration0036Fold } from '../../src/db/migrations/0036-search-refold.ts';
import { foldForSearch as migration0037Fold } from '../../src/db/migrations/0037-search-spaces.ts';
import { foldForSearch as migration0039Fold } from '../../src/db/migrations/0039-search-accents.ts';

// Text and the folded form stored in files.searchName / files.searchOcr.
const cases: Array<[string, string]> = [
  ['photo_2024-01-01.JPG', 'photo_2024-01-01.jpg'],
  ['ÄRGER.txt', 'ärger.txt'],
  ['ﬁle.pdf', 'file.pdf'],
  ['ＦＵＬＬ', 'full'],
  ['Straße', 'strasse'],
  ['STRASSE', 'strasse'],
  ['ΟΔΟΣ', 'οδοσ'],
  ['İstanbul', 'istanbul'],
  ['cafe\u0301', 'caf\u00e9'],
  ['Ⅻ', 'xii'],
  ['', ''],
];

// A stored name has `_` where its uploader typed a space; recognised text has spaces and line breaks.
const spaced: Array<[string, string]> = [
  ['data_sheet.csv', 'data sheet.csv'],
  ['Data  Sheet\n2024\t_x', 'data sheet 2024 x'],
  ['a\u3000b\u00a0c', 'a b c'],
  ['_', ' '],
  ['ＤＡＴＡ\uff3fSHEET', 'data sheet'],
];

describe('search folding', () => {
  // Migration 0006 folded the rows that existed when it ran with its own copy of the function: a
  // migration is frozen, so that copy's output must never change.
  it("migration 0006's copy folds as it did when it was written", () => {
    for (const [text, folded] of cases) expect(migration0006Fold(text), text).toBe(folded);
  });

  // Today the application folds the same way but for white space and underscores (0037), so rows
  // folded by the migrations and rows written since are compared alike. Were the application's
  // folding ever changed on purpose, this would fail: the change then needs a migration that refolds
  // the stored values, and these cases move there.
  it('migration 0037 folds these as 0006 did, with white space and underscores alike', () => {
    for (const [text, folded] of cases) expect(migration0037Fold(text), text).toBe(folded.replaceAll('_', ' '));
    for (const [text, folded] of spaced) expect(migration0037Fold(text), JSON.stringify(text)).toBe(folded);
  });

  // Today the application folds as 0037 did, less accents, strokes and format characters (0039).
  // Were the application's folding ever changed on purpose, this would fail: the change then needs
  // a migration that refolds the stored values, and these cases move there.
  const unaccented: Array<[string, string]> = [
    ['ÄRGER.txt', 'arger.txt'],
    ['cafe\u0301', 'cafe'],
    ['Café', 'cafe'],
    ['Łódź', 'lodz'],
    ['Øresund', 'oresund'],
    ['Kırmızı', 'kirmizi'],
    ['Æble Œuvre', 'aeble oeuvre'],
    ['Ἀθῆναι', 'αθηναι'],
    ['Ёлка', 'елка'],
    ['\u0390', '\u03b9'],
    ['👨\u200d👩\u200d👧', '👨👩👧'],
    ['می\u200cخواهم', 'میخواهم'],
    // Marks that are letters' own parts in other scripts stay.
    ['が', 'が'],
    ['हिंदी', 'हिंदी'],
  ];
  it('the application folds as migration 0039 did: as 0037, less accents, strokes and format characters', () => {
    for (const [text] of cases) expect(foldForSearch(text), text).toBe(migration0039Fold(text));
    for (const [text, folded] of spaced) expect(foldForSearch(text), JSON.stringify(text)).toBe(folded);
    for (const [text, folded] of unaccented) {
      expect(foldForSearch(text), text).toBe(folded);
      expect(migration0039Fold(text), text).toBe(folded);
    }
  });

  // Where 0006's folding was not closed under case, and the application's and migration 0036's are.
  const refolded: Array<[string, string, string]> = [
    ['GROẞE', 'große', 'grosse'],
    ['\u0390', '\u03b9\u0308\u0301', '\u0390'],
    ['\u1fe3', '\u03c5\u0308\u0301', '\u03b0'],
  ];
  it('folds the capital sharp s and Greek letters with dialytika and tonos as their other case, as 0036 refolded them', () => {
    for (const [text, before, after] of refolded) {
      expect(migration0006Fold(text), text).toBe(before);
      expect(migration0036Fold(text), text).toBe(after);
      expect(foldForSearch(foldForSearch(text)), text).toBe(foldForSearch(after));
    }
    for (const [text, folded] of cases) expect(migration0036Fold(text), text).toBe(folded);
  });

  it('is closed under case: every code point, its upper and its lower case fold alike, and folding again changes nothing', () => {
    const open: string[] = [];
    for (let point = 0x20; point <= 0x2ffff; point++) {
      if (point >= 0xd800 && point <= 0xdfff) continue;
      const text = String.fromCodePoint(point);
      const folded = foldForSearch(text);
      if (foldForSearch(folded) !== folded || foldForSearch(text.toUpperCase()) !== folded || foldForSearch(text.toLowerCase()) !== folded) open.push(point.toString(16));
    }
    expect(open).toEqual([]);
  });
});

describe('the range of text beginning with a term', () => {
  it('ends at the term with its last code point raised by one, skipping surrogates and the last code point', () => {
    expect(followingPrefix('holiday')).toBe('holidaz');
    expect(followingPrefix('caf\u00e9')).toBe('caf\u00ea');
    expect(followingPrefix('a\u{1F600}')).toBe('a\u{1F601}');
    expect(followingPrefix('ab\u{10FFFF}')).toBe('ac');
    expect(followingPrefix('x\u{D7FF}')).toBe('x\u{E000}');
    expect(followingPrefix('\u{10FFFF}\u{10FFFF}')).toBeNull();
  });
});
