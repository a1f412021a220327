import { describe, expect, it } from 'vitest';
import { parseRange } from '../../src/files/file-access.ts';

/**
 * The Range header (RFC 9110 §14; docs/decisions.md, "Ranges and previews") against a slow model:
 * the set of bytes the satisfiable ranges cover. The answer is that set as one range when it is
 * one, the whole file (null) when it is several or when any item is no range, and 'unsatisfiable'
 * when no range covers a byte.
 */
type Item = { text: string; invalid?: true; from?: number | null; to?: number | null };

function model(items: Item[], size: number) {
  if (items.every((item) => item.text.trim() === '')) return null;
  const covered = new Set<number>();
  for (const item of items) {
    if (item.text.trim() === '') continue;
    if (item.invalid) return null;
    const from = item.from ?? null;
    const to = item.to ?? null;
    if (from !== null && to !== null && to < from) return null;
    const [start, end] = from === null ? [Math.max(0, size - to!), size - 1] : [from, to === null ? size - 1 : Math.min(to, size - 1)];
    if (from === null && to === 0) continue;
    for (let byte = start; byte <= end; byte++) covered.add(byte);
  }
  if (covered.size === 0) return 'unsatisfiable';
  const bytes = [...covered].sort((a, b) => a - b);
  const [first, last] = [bytes[0]!, bytes.at(-1)!];
  return last - first + 1 === bytes.length ? { start: first, end: last } : null;
}

/** A small deterministic generator, so a failure can be told again by its seed. */
function random(seed: number) {
  let state = seed >>> 0 || 1;
  return (below: number) => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) % below;
  };
}

describe('the Range header', () => {
  it('answers as the model of covered bytes does, for 20,000 random headers', () => {
    const junk = ['x', '1-2-3', '-', 'a-5', '5-b', '1 - 2', '0x1-2', '+1-2', '1;2'];
    for (let seed = 1; seed <= 20_000; seed++) {
      const next = random(seed);
      const size = next(40);
      const count = next(4);
      const items = Array.from({ length: count }, (): Item => {
        const kind = next(10);
        if (kind === 0) return { text: ' '.repeat(next(2)) };
        if (kind === 1) return { text: junk[next(junk.length)]!, invalid: true };
        const from = next(3) === 0 ? null : next(50);
        const to = from === null ? next(50) : next(3) === 0 ? null : next(50);
        return { text: `${' '.repeat(next(2))}${from ?? ''}-${to ?? ''}${' '.repeat(next(2))}`, from, to };
      });
      const header = `${['bytes', 'BYTES', 'Bytes'][next(3)]}${next(2) ? ' = ' : '='}${items.map((item) => item.text).join(',')}`;
      expect(parseRange(header, size), `${header} of ${size} bytes (seed ${seed})`).toEqual(model(items, size));
    }
  });

  it('ignores another unit or no header at all', () => {
    for (const header of [undefined, '', 'items=0-1', 'bytes 0-1', 'bytes', '=0-1']) expect(parseRange(header, 10), String(header)).toBeNull();
  });
});
