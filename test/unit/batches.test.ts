import { describe, expect, it } from 'vitest';
import { inBatches } from '../../src/db/batches.ts';

/** A stand-in for a batch's transaction: `left` rows to change, each costing `msPerRow` of busy time. */
function work(total: number, msPerRow: number) {
  let left = total;
  const sizes: number[] = [];
  const batch = async (rows: number) => {
    sizes.push(rows);
    const changed = Math.min(rows, left);
    const until = performance.now() + changed * msPerRow;
    while (performance.now() < until);
    left -= changed;
    return changed;
  };
  return { batch, sizes, left: () => left };
}

describe('inBatches', () => {
  it('on SQLite, cuts batches whose rows are expensive, so that a transaction holds the process briefly, and still changes every row', async () => {
    const expensive = work(300, 1);
    await inBatches('sqlite', expensive.batch);
    expect(expensive.left()).toBe(0);
    // The first batch is small while the cost is unknown; at 1 ms a row the next ones are the fewest.
    expect(expensive.sizes[0]).toBe(50);
    expect(expensive.sizes.slice(1).every((rows) => rows === 25)).toBe(true);
  });

  it('on SQLite, grows batches of cheap rows to the most a transaction changes', async () => {
    const cheap = work(1000, 0);
    await inBatches('sqlite', cheap.batch);
    expect(cheap.left()).toBe(0);
    expect(cheap.sizes).toEqual([50, 200, 200, 200, 200, 200]);
  });

  it('on PostgreSQL, whose transactions hold no process, keeps the most rows a transaction changes', async () => {
    const expensive = work(450, 0.1);
    await inBatches('postgres', expensive.batch);
    expect(expensive.left()).toBe(0);
    expect(expensive.sizes).toEqual([200, 200, 200]);
  });
});
