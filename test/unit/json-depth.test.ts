import { describe, expect, it } from 'vitest';
import { nestsDeeperThan } from '../../src/http/json-depth.ts';

describe('the nesting limit of JSON bodies', () => {
  it('counts arrays and objects, not brackets inside strings', () => {
    expect(nestsDeeperThan('{"a":[{"b":[1]}]}', 4)).toBe(false);
    expect(nestsDeeperThan('{"a":[{"b":[1]}]}', 3)).toBe(true);
    expect(nestsDeeperThan(`{"a":"${'['.repeat(100)}"}`, 1)).toBe(false);
    // An escaped quote does not end the string; an escaped backslash before a quote does.
    expect(nestsDeeperThan(String.raw`["\"[[[", 1]`, 1)).toBe(false);
    expect(nestsDeeperThan(String.raw`["\\", [[1]]]`, 2)).toBe(true);
    expect(nestsDeeperThan(String.raw`["\\", [[1]]]`, 3)).toBe(false);
  });

  it('counts depth, not the number of arrays', () => {
    expect(nestsDeeperThan(`[${'[],'.repeat(1000)}[]]`, 2)).toBe(false);
    expect(nestsDeeperThan(`${'['.repeat(65)}${']'.repeat(65)}`, 64)).toBe(true);
    expect(nestsDeeperThan(`${'['.repeat(64)}${']'.repeat(64)}`, 64)).toBe(false);
  });
});
