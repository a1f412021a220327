import { describe, expect, it } from 'vitest';
import { RequestLoad } from '../../src/shared/request-load.ts';
import { giveWayToRequests } from '../../src/media/media-jobs.ts';

describe('RequestLoad', () => {
  it('is busy while requests keep starting at the rate given, and calm again once they stop', () => {
    const load = new RequestLoad(20, 500);
    const t0 = 1_000_000;
    // 9 requests in half a second: under 20 a second.
    for (let i = 0; i < 9; i++) load.note(t0 + i * 50);
    expect(load.busy(t0 + 460)).toBe(false);
    load.note(t0 + 470);
    expect(load.busy(t0 + 480)).toBe(true);
    // The next window still remembers the busy one…
    expect(load.busy(t0 + 700)).toBe(true);
    // …but not two windows later.
    expect(load.busy(t0 + 1600)).toBe(false);
  });

  it('lets media work through once a second while busy, and always when calm', () => {
    const load = new RequestLoad(1, 500);
    const gate = giveWayToRequests(load, 1000);
    expect(gate()).toBe(true);
    load.note();
    expect(load.busy()).toBe(true);
    // Busy: the first call opens (the trickle), the next ones within a second do not.
    expect(gate()).toBe(true);
    expect(gate()).toBe(false);
    expect(gate()).toBe(false);
  });
});
