import { describe, expect, it } from 'vitest';
import { tempLimitProblem } from '../../src/shared/chunk-limits.ts';

describe('the largest upload against the room for unfinished chunked uploads', () => {
  it('counts the accounts whose idle uploads leave no room for one more of the largest', () => {
    // Three of 600 MB hold 1.8 GB of 2 GiB: a fourth no longer fits.
    expect(tempLimitProblem(600_000_000, 2_147_483_648)).toMatch(/: 3 accounts starting uploads of that size/);
    // One of all of it.
    expect(tempLimitProblem(200 * 1024 * 1024, 200 * 1024 * 1024)).toMatch(/: one account starting uploads of that size/);
    // Within a quarter, or no limit: nothing to say.
    expect(tempLimitProblem(1024, 4096)).toBeNull();
    expect(tempLimitProblem(1024 ** 3, 0)).toBeNull();
  });
});
