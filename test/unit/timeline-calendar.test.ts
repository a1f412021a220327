import { describe, expect, it } from 'vitest';
import { bucketOf, bucketsBetween, canonicalTimeZone, isoWeekKey, offsetAt, startOfLocalDay } from '../../src/listing/calendar.ts';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();
const bucket = (instant: string, groupBy: 'none' | 'month' | 'week' | 'year', timeZone: string) => {
  const b = bucketOf(at(instant), groupBy, timeZone);
  return { key: b.key, from: iso(b.from), to: iso(b.to) };
};

describe('offsets and local midnight', () => {
  it('reads the UTC offset, daylight saving included', () => {
    expect(offsetAt(at('2024-01-15T12:00:00Z'), 'Europe/Berlin')).toBe(3_600_000);
    expect(offsetAt(at('2024-07-15T12:00:00Z'), 'Europe/Berlin')).toBe(7_200_000);
    expect(offsetAt(at('2024-07-15T12:00:00Z'), 'America/New_York')).toBe(-4 * 3_600_000);
    expect(offsetAt(at('2024-07-15T12:00:00Z'), 'Asia/Kathmandu')).toBe(5.75 * 3_600_000);
    expect(offsetAt(at('2024-07-15T12:00:00Z'), 'UTC')).toBe(0);
  });

  it('finds local midnight on both sides of a transition', () => {
    // Europe/Berlin: CET (+1) until 2024-03-31 01:00Z, then CEST (+2).
    expect(iso(startOfLocalDay({ year: 2024, month: 3, day: 31 }, 'Europe/Berlin'))).toBe('2024-03-30T23:00:00.000Z');
    expect(iso(startOfLocalDay({ year: 2024, month: 4, day: 1 }, 'Europe/Berlin'))).toBe('2024-03-31T22:00:00.000Z');
    // America/New_York: EDT (-4) until 2024-11-03 06:00Z, then EST (-5).
    expect(iso(startOfLocalDay({ year: 2024, month: 11, day: 3 }, 'America/New_York'))).toBe('2024-11-03T04:00:00.000Z');
    expect(iso(startOfLocalDay({ year: 2024, month: 11, day: 4 }, 'America/New_York'))).toBe('2024-11-04T05:00:00.000Z');
  });

  it('starts a day whose midnight is skipped at the jump (America/Santiago, 2024-09-08)', () => {
    // At 04:00Z the clock jumps from 23:59:59 (-04) to 01:00 (-03): the 8th starts at the jump.
    expect(iso(startOfLocalDay({ year: 2024, month: 9, day: 8 }, 'America/Santiago'))).toBe('2024-09-08T04:00:00.000Z');
  });

  it('starts a day whose midnight happens twice at its first occurrence (America/Havana, 2024-11-03)', () => {
    // At 05:00Z the clock goes back from 01:00 (-04) to 00:00 (-05).
    expect(iso(startOfLocalDay({ year: 2024, month: 11, day: 3 }, 'America/Havana'))).toBe('2024-11-03T04:00:00.000Z');
  });

  it('starts every day at the first instant of its date, in zones whose clocks change at or near midnight', () => {
    // The reference: the first whole second whose local date is not before the day, by bisection
    // over four days around its midnight read as UTC (offsets stay within ±14 hours).
    const formats = new Map<string, Intl.DateTimeFormat>();
    const dateKey = (instant: number, timeZone: string) => {
      if (!formats.has(timeZone)) formats.set(timeZone, new Intl.DateTimeFormat('en-US', { timeZone, year: 'numeric', month: 'numeric', day: 'numeric' }));
      const parts = Object.fromEntries(formats.get(timeZone)!.formatToParts(instant).map((p) => [p.type, p.value]));
      return Number(parts.year) * 10_000 + Number(parts.month) * 100 + Number(parts.day);
    };
    const reference = (year: number, month: number, day: number, timeZone: string) => {
      const wall = Date.UTC(year, month - 1, day);
      let low = wall - 2 * 86_400_000;
      let high = wall + 2 * 86_400_000;
      while (high - low > 1000) {
        const mid = Math.floor((low + high) / 2000) * 1000;
        if (dateKey(mid, timeZone) >= year * 10_000 + month * 100 + day) high = mid;
        else low = mid;
      }
      return high;
    };
    // A year with each zone's changes both ways: Havana and Santiago change at midnight (twice and
    // skipped), Asuncion and Beirut at midnight, Lord Howe by half an hour, and Apia skipped 30
    // December 2011 entirely.
    const zones = ['America/Havana', 'America/Santiago', 'America/Asuncion', 'Asia/Beirut', 'Australia/Lord_Howe', 'Pacific/Apia', 'Europe/Berlin'];
    let days = 0;
    for (const timeZone of zones) {
      for (let t = Date.UTC(2011, 2, 1); t < Date.UTC(2012, 2, 1); t += 86_400_000) {
        const d = new Date(t);
        const [year, month, day] = [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate()];
        expect(iso(startOfLocalDay({ year, month, day }, timeZone)), `${timeZone} ${year}-${month}-${day}`).toBe(iso(reference(year, month, day, timeZone)));
        days += 1;
      }
    }
    expect(days).toBe(zones.length * 366);
  });
});

describe('month buckets across daylight saving changes', () => {
  it('Europe/Berlin, spring forward: March has 30 days and 23 hours', () => {
    expect(bucket('2024-03-15T12:00:00Z', 'month', 'Europe/Berlin')).toEqual({ key: '2024-03', from: '2024-02-29T23:00:00.000Z', to: '2024-03-31T22:00:00.000Z' });
    expect(bucket('2024-03-31T21:59:59.999Z', 'month', 'Europe/Berlin').key).toBe('2024-03');
    expect(bucket('2024-03-31T22:00:00.000Z', 'month', 'Europe/Berlin').key).toBe('2024-04');
  });

  it('Europe/Berlin, fall back', () => {
    expect(bucket('2024-10-27T12:00:00Z', 'month', 'Europe/Berlin')).toEqual({ key: '2024-10', from: '2024-09-30T22:00:00.000Z', to: '2024-10-31T23:00:00.000Z' });
  });

  it('America/New_York, both changes', () => {
    expect(bucket('2024-03-10T12:00:00Z', 'month', 'America/New_York')).toEqual({ key: '2024-03', from: '2024-03-01T05:00:00.000Z', to: '2024-04-01T04:00:00.000Z' });
    expect(bucket('2024-11-03T12:00:00Z', 'month', 'America/New_York')).toEqual({ key: '2024-11', from: '2024-11-01T04:00:00.000Z', to: '2024-12-01T05:00:00.000Z' });
    // The first hours of a UTC month are still the previous local month.
    expect(bucket('2024-12-01T04:59:59.999Z', 'month', 'America/New_York').key).toBe('2024-11');
  });

  it('groupBy none buckets by month', () => {
    expect(bucket('2024-03-15T12:00:00Z', 'none', 'UTC')).toEqual({ key: '2024-03', from: '2024-03-01T00:00:00.000Z', to: '2024-04-01T00:00:00.000Z' });
  });

  it('year buckets follow the local new year', () => {
    expect(bucket('2024-12-31T23:30:00Z', 'year', 'Europe/Berlin')).toEqual({ key: '2025', from: '2024-12-31T23:00:00.000Z', to: '2025-12-31T23:00:00.000Z' });
    expect(bucket('2025-01-01T03:00:00Z', 'year', 'America/New_York')).toEqual({ key: '2024', from: '2024-01-01T05:00:00.000Z', to: '2025-01-01T05:00:00.000Z' });
  });
});

describe('ISO weeks', () => {
  it('start on Monday local midnight, also in a week with a daylight saving change', () => {
    expect(bucket('2024-03-27T12:00:00Z', 'week', 'Europe/Berlin')).toEqual({ key: '2024-W13', from: '2024-03-24T23:00:00.000Z', to: '2024-03-31T22:00:00.000Z' });
    expect(bucket('2024-11-05T12:00:00Z', 'week', 'America/New_York')).toEqual({ key: '2024-W45', from: '2024-11-04T05:00:00.000Z', to: '2024-11-11T05:00:00.000Z' });
    // Sunday late evening in New York is already Monday in UTC.
    expect(bucket('2024-11-11T03:00:00Z', 'week', 'America/New_York').key).toBe('2024-W45');
    expect(bucket('2024-11-11T03:00:00Z', 'week', 'UTC').key).toBe('2024-W46');
  });

  it('week 53 and the year boundary', () => {
    expect(isoWeekKey({ year: 2020, month: 12, day: 28 })).toBe('2020-W53');
    expect(bucket('2021-01-03T12:00:00Z', 'week', 'UTC')).toEqual({ key: '2020-W53', from: '2020-12-28T00:00:00.000Z', to: '2021-01-04T00:00:00.000Z' });
    expect(bucket('2021-01-04T00:00:00Z', 'week', 'UTC').key).toBe('2021-W01');
    expect(bucket('2027-01-01T12:00:00Z', 'week', 'UTC').key).toBe('2026-W53');
    expect(bucket('2024-12-31T12:00:00Z', 'week', 'UTC').key).toBe('2025-W01');
    expect(bucket('2019-12-30T00:00:00Z', 'week', 'UTC').key).toBe('2020-W01');
    expect(bucket('2023-01-01T12:00:00Z', 'week', 'UTC').key).toBe('2022-W52');
    expect(bucket('2015-12-31T12:00:00Z', 'week', 'UTC').key).toBe('2015-W53');
    // A UTC instant on 31 December that is already Monday 4 January... in a zone east of UTC.
    expect(bucket('2020-12-31T23:30:00Z', 'week', 'Pacific/Kiritimati').key).toBe('2020-W53');
  });
});

describe('consecutive buckets', () => {
  it('share boundaries and cover every instant between two times', () => {
    const buckets = bucketsBetween(at('2023-10-20T00:00:00Z'), at('2024-04-10T00:00:00Z'), 'month', 'Europe/Berlin');
    expect(buckets.map((b) => b.key)).toEqual(['2023-10', '2023-11', '2023-12', '2024-01', '2024-02', '2024-03', '2024-04']);
    for (let i = 1; i < buckets.length; i++) expect(buckets[i]!.from).toBe(buckets[i - 1]!.to);
    const weeks = bucketsBetween(at('2020-12-20T00:00:00Z'), at('2021-01-12T00:00:00Z'), 'week', 'America/New_York');
    expect(weeks.map((b) => b.key)).toEqual(['2020-W51', '2020-W52', '2020-W53', '2021-W01', '2021-W02']);
  });
});

describe('time zone names', () => {
  it('accepts IANA names and rejects others', () => {
    expect(canonicalTimeZone('Europe/Berlin')).toBe('Europe/Berlin');
    expect(canonicalTimeZone('UTC')).toBe('UTC');
    expect(canonicalTimeZone('europe/berlin')).toBe('Europe/Berlin');
    // ICU's own IDs include IANA's retired spellings: a current name is kept as written.
    expect(canonicalTimeZone('Asia/Kolkata')).toBe('Asia/Kolkata');
    expect(canonicalTimeZone('Asia/Calcutta')).toBe('Asia/Calcutta');
    expect(canonicalTimeZone('Pacific/Pohnpei')).toBe('Pacific/Pohnpei');
    expect(canonicalTimeZone('Mars/Olympus_Mons')).toBeNull();
    expect(canonicalTimeZone('')).toBeNull();
  });
});
