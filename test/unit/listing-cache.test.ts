import { describe, expect, it } from 'vitest';
import { entryBytes, ListingCache } from '../../src/listing/listing-cache.ts';

/** A producer that counts its calls and answers `body`. */
function producer(body: string) {
  const made = { calls: 0, produce: async () => ((made.calls += 1), body) };
  return made;
}

describe('ListingCache', () => {
  it('reuses a body only for the same account, key and version', async () => {
    const cache = new ListingCache(1024 * 1024);
    const a = producer('{"a":1}');
    expect((await cache.body('u1', 5, 'files?x', a.produce)).toString()).toBe('{"a":1}');
    expect((await cache.body('u1', 5, 'files?x', a.produce)).toString()).toBe('{"a":1}');
    expect(a.calls).toBe(1);

    // Another version, key or account: made anew.
    const b = producer('{"b":2}');
    expect((await cache.body('u1', 6, 'files?x', b.produce)).toString()).toBe('{"b":2}');
    expect((await cache.body('u1', 6, 'files?y', b.produce)).toString()).toBe('{"b":2}');
    expect((await cache.body('u2', 6, 'files?x', b.produce)).toString()).toBe('{"b":2}');
    expect(b.calls).toBe(3);
  });

  it('does not let a request authenticated earlier replace a newer entry', async () => {
    const cache = new ListingCache(1024 * 1024);
    await cache.body('u1', 7, 'k', producer('new').produce);
    await cache.body('u1', 6, 'k', producer('old').produce);
    const again = producer('unused');
    expect((await cache.body('u1', 7, 'k', again.produce)).toString()).toBe('new');
    expect(again.calls).toBe(0);
  });

  it('evicts the least recently used entries beyond its byte budget', async () => {
    const entry = entryBytes('u', 'a', 100);
    const cache = new ListingCache(4 * entry);
    const body = 'x'.repeat(100);
    for (const key of ['a', 'b', 'c', 'd']) await cache.body('u', 1, key, producer(body).produce);
    expect(cache.stats()).toEqual({ entries: 4, bytes: 4 * entry });
    // Using "a" makes "b" the least recently used.
    await cache.body('u', 1, 'a', producer('unused').produce);
    await cache.body('u', 1, 'e', producer(body).produce);
    expect(cache.stats()).toEqual({ entries: 4, bytes: 4 * entry });
    const a = producer('again');
    const b = producer('again');
    await cache.body('u', 1, 'a', a.produce);
    await cache.body('u', 1, 'b', b.produce);
    expect([a.calls, b.calls]).toEqual([0, 1]);
  });

  it('counts the encoded bytes and the keys, and keeps no entry larger than a quarter of its budget', async () => {
    const accents = entryBytes('u', 'accents', 100);
    const cache = new ListingCache(4 * accents);
    // 50 characters, 100 bytes of UTF-8.
    await cache.body('u', 1, 'accents', producer('é'.repeat(50)).produce);
    expect(cache.stats()).toEqual({ entries: 1, bytes: accents });
    expect(entryBytes('u', 'a much longer key', 100)).toBeGreaterThan(entryBytes('u', 'k', 100));
    const big = producer('y'.repeat(accents));
    await cache.body('u', 1, 'big', big.produce);
    await cache.body('u', 1, 'big', big.produce);
    expect(big.calls).toBe(2);
    expect(cache.stats().entries).toBe(1);
  });

  it('reuses nothing for a version that is not a number', async () => {
    const cache = new ListingCache(1024);
    const made = producer('{}');
    for (const version of [undefined, null, Number.NaN, 1.5]) {
      await cache.body('u', version as unknown as number, 'k', made.produce);
      await cache.body('u', version as unknown as number, 'k', made.produce);
    }
    expect(made.calls).toBe(8);
    expect(cache.stats().entries).toBe(0);
  });

  it('keeps nothing with a budget of zero', async () => {
    const cache = new ListingCache(0);
    const made = producer('{}');
    await cache.body('u', 1, 'k', made.produce);
    await cache.body('u', 1, 'k', made.produce);
    expect(made.calls).toBe(2);
    expect(cache.stats()).toEqual({ entries: 0, bytes: 0 });
  });
});
