/**
 * yazl's CRC-32 (the buffer-crc32 API) is computed by node:zlib (scripts/zlib-crc32, installed in
 * its place through package.json's overrides): the same values as the reference CRC-32, in every
 * form yazl and other callers use, and the package yazl really loads.
 */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const yazlRequire = createRequire(require.resolve('yazl'));
type Crc32 = ((input: string | Buffer, previous?: Buffer | number) => Buffer) & {
  unsigned(input: string | Buffer, previous?: Buffer | number): number;
  signed(input: string | Buffer, previous?: Buffer | number): number;
};
const crc32 = yazlRequire('buffer-crc32') as Crc32;

/** The reference CRC-32 (IEEE 802.3, reflected, as ZIP uses it), bit by bit. */
function reference(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

describe('the CRC-32 yazl computes', () => {
  it('is the package in scripts/zlib-crc32', () => {
    expect(yazlRequire('buffer-crc32/package.json').version).toBe('1.0.0-zlib');
  });

  it('matches the reference and the standard check value', () => {
    expect(crc32.unsigned('123456789')).toBe(0xcbf43926);
    const bytes = Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 31 + 7) & 0xff));
    expect(crc32.unsigned(bytes)).toBe(reference(bytes));
    expect(crc32.signed(bytes)).toBe(reference(bytes) | 0);
    expect(crc32(bytes).readUInt32BE(0)).toBe(reference(bytes));
    expect(crc32.unsigned(Buffer.alloc(0))).toBe(0);
  });

  it('continues from a previous value, given as a number or as the Buffer it returned', () => {
    const bytes = Buffer.from('the quick brown fox jumps over the lazy dog, twice over');
    const [head, tail] = [bytes.subarray(0, 17), bytes.subarray(17)];
    expect(crc32.unsigned(tail, crc32.unsigned(head))).toBe(reference(bytes));
    expect(crc32(tail, crc32(head)).readUInt32BE(0)).toBe(reference(bytes));
    expect(crc32.signed(tail, crc32.signed(head))).toBe(reference(bytes) | 0);
  });
});
