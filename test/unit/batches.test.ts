import { describe, expect, it } from 'vitest';
import { inBatches } from '../../src/db/batches.ts';

/**
 * A stand-in for a batch's transaction: `total` rows to change, each taking `msPerRow` on a clock of
 * its own, which the batches are timed by (a machine's load would otherwise decide the sizes).
 */
function work(total: number, msPerRow: number) {
  let left = total;
  let clock = 0;
  const sizes: number[] = [];
  const batch = async (rows: number) => {
    sizes.push(rows);
    const changed = Math.min(rows, left);
    clock += changed * msPerRow;
    left -= changed;
    return changed;
  };
  return { batch, now: () => clock, sizes, left: () => left };
}

describe('inBatches', () => {
  it('on SQLite, cuts batches whose rows are expensive, so that a transaction holds the process briefly, and still changes every row', async () => {
    const expensive = work(300, 1);
    await inBatches('sqlite', expensive.batch, expensive.now);
    expect(expensive.left()).toBe(0);
    // The first batch is small while the cost is unknown; at 1 ms a row the next ones are the fewest.
    expect(expensive.sizes).toEqual([50, 25, 25, 25, 25, 25, 25, 25, 25, 25, 25, 25]);
  });

  it('on SQLite, sizes a batch to the time per row of the one before', async () => {
    const middling = work(1000, 0.25);
    await inBatches('sqlite', middling.batch, middling.now);
    expect(middling.left()).toBe(0);
    expect(middling.sizes).toEqual([50, 80, 80, 80, 80, 80, 80, 80, 80, 80, 80, 80, 80]);
  });

  it('on SQLite, grows batches of cheap rows to the most a transaction changes', async () => {
    const cheap = work(1000, 0.01);
    await inBatches('sqlite', cheap.batch, cheap.now);
    expect(cheap.left()).toBe(0);
    expect(cheap.sizes).toEqual([50, 200, 200, 200, 200, 200]);
  });

  it('on PostgreSQL, whose transactions hold no process, keeps the most rows a transaction changes', async () => {
    const expensive = work(450, 1);
    await inBatches('postgres', expensive.batch, expensive.now);
    expect(expensive.left()).toBe(0);
    expect(expensive.sizes).toEqual([200, 200, 200]);
  });
});
