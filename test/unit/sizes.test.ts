import { describe, expect, it } from 'vitest';
import { sizeInWords } from '../../src/shared/sizes.ts';

describe('sizes in messages', () => {
  it('says whole units as they are and small sizes in bytes', () => {
    expect([0, 1, 500, 1023, 1024, 16 * 1024, 1024 ** 2, 100 * 1024 ** 2, 1024 ** 3, 5 * 1024 ** 4].map(sizeInWords)).toEqual([
      '0 bytes',
      '1 byte',
      '500 bytes',
      '1023 bytes',
      '1 KiB',
      '16 KiB',
      '1 MiB',
      '100 MiB',
      '1 GiB',
      '5 TiB',
    ]);
  });

  it('gives other sizes to a tenth, never more than they are, with the exact bytes', () => {
    expect(sizeInWords(1500)).toBe('1.4 KiB (1500 bytes)');
    expect(sizeInWords(1024 ** 2 - 1)).toBe('1023.9 KiB (1048575 bytes)');
    expect(sizeInWords(1024 ** 2 + 1)).toBe('1 MiB (1048577 bytes)');
    expect(sizeInWords(1.5 * 1024 ** 3)).toBe('1.5 GiB');
    expect(sizeInWords(1.5 * 1024 ** 3 + 7)).toBe('1.5 GiB (1610612743 bytes)');
  });
});
