import { afterEach, describe, expect, it } from 'vitest';
import { bucketsBetween } from '../../src/listing/calendar.ts';
import { periodRange } from '../../web/src/periods.ts';

/**
 * The web app reads a timeline period from its address (`period`, the bucket's key) and computes its
 * instants in the browser's zone, which is the zone it asks the timeline in: they must be the
 * server's bucket, or the list would show other files than the bar counted. Node reads `TZ` again
 * when it changes, so each zone is the browser's in turn.
 */
const zones = ['UTC', 'Asia/Kolkata', 'Asia/Kathmandu', 'America/New_York', 'America/Santiago', 'Australia/Lord_Howe', 'Pacific/Chatham', 'Pacific/Apia', 'America/St_Johns'];
const outer = process.env.TZ;
afterEach(() => {
  if (outer === undefined) delete process.env.TZ;
  else process.env.TZ = outer;
});

describe("the web app's timeline periods", () => {
  it.each(zones)('span exactly the server\'s buckets in %s, months, ISO weeks and years', (zone) => {
    process.env.TZ = zone;
    for (const groupBy of ['month', 'week', 'year'] as const) {
      // Across daylight-saving changes, a skipped day (Apia, 2011-12-30), week 53s, and far years.
      for (const [first, last] of [
        ['2008-06-01T00:00:00Z', '2013-06-01T00:00:00Z'],
        ['2024-01-01T00:00:00Z', '2026-12-31T00:00:00Z'],
        ['0001-01-01T00:00:00Z', '0002-06-01T00:00:00Z'],
        ['9998-06-01T00:00:00Z', '9999-12-01T00:00:00Z'],
      ] as const) {
        for (const bucket of bucketsBetween(Date.parse(first), Date.parse(last), groupBy, zone)) {
          expect(periodRange(bucket.key, groupBy), `${zone} ${bucket.key}`).toEqual({ from: bucket.from, to: bucket.to });
        }
      }
    }
  });

  it('chooses nothing for a key of another grouping or no period at all', () => {
    for (const [key, groupBy] of [
      ['2026-11', 'week'],
      ['2026-W47', 'month'],
      ['2026', 'month'],
      ['2026-13', 'month'],
      ['2026-00', 'month'],
      ['2026-W54', 'week'],
      ['2025-W53', 'week'], // 2025 has 52 ISO weeks
      ['2026-W00', 'week'],
      ['all', 'month'],
      ['26-11', 'month'],
      ['2026-11 ', 'month'],
    ] as const) {
      expect(periodRange(key, groupBy), `${key} by ${groupBy}`).toBeNull();
    }
    // 2026 begins on a Thursday, so it has a week 53.
    expect(periodRange('2026-W53', 'week')).not.toBeNull();
  });
});
