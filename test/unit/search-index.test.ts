import { describe, expect, it } from 'vitest';
import { mergeWanted } from '../../src/listing/search-index.ts';

// When the daily upkeep merges SQLite's search index (src/listing/search-index.ts): only when the
// segments besides the largest hold more than a tenth of its pages.
describe('mergeWanted', () => {
  const segments = (...pages: number[]) => new Map(pages.map((n, i) => [i + 1, n]));

  it('leaves one segment, or a large one with a few small ones, alone', () => {
    expect(mergeWanted(segments())).toBe(false);
    expect(mergeWanted(segments(334_608))).toBe(false);
    expect(mergeWanted(segments(334_608, 40, 12, 3))).toBe(false);
    expect(mergeWanted(segments(900, 50, 50))).toBe(false);
  });

  it('merges segments of which the others hold more than a tenth', () => {
    expect(mergeWanted(segments(900, 51, 50))).toBe(true);
    expect(mergeWanted(segments(10_602, 10_581, 5_512, 1_298, 1_290))).toBe(true);
    expect(mergeWanted(segments(2, 2))).toBe(true);
  });
});
