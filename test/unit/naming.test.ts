import { describe, expect, it } from 'vitest';
import { nameFromBytes } from '../../src/shared/naming.ts';

describe('names stored as bytes', () => {
  it('reads a name as UTF-8 when it is UTF-8, as Latin-1 otherwise', () => {
    expect(nameFromBytes(Buffer.from('café ✓ 😀.txt'))).toBe('café ✓ 😀.txt');
    expect(nameFromBytes(Buffer.from([0x63, 0x61, 0x66, 0xe9]))).toBe('café');
    // A lone continuation byte, or a truncated sequence, is not UTF-8 either.
    expect(nameFromBytes(Buffer.from([0x61, 0x80]))).toBe('a\u0080');
    expect(nameFromBytes(Buffer.from([0x61, 0xe2, 0x9c]))).toBe('a\u00e2\u009c');
  });
});
