import { describe, expect, it } from 'vitest';
import { generateShortCode, isShortCode, SHORT_CODE_ALPHABET, SHORT_CODE_LENGTH } from '../../src/links/short-code.ts';
import { normalizeTargetUrl } from '../../src/links/short-links.ts';
import { AppError } from '../../src/errors.ts';

describe('short-code generator', () => {
  it('uses exactly letters, digits and underscore', () => {
    expect(SHORT_CODE_LENGTH).toBe(6);
    expect([...SHORT_CODE_ALPHABET].sort().join('')).toBe([...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_'].sort().join(''));
    expect(new Set(SHORT_CODE_ALPHABET).size).toBe(63);
  });

  it('makes six-character codes drawn evenly from the whole alphabet', () => {
    const samples = 20_000;
    const counts = new Map<string, number>();
    const codes = new Set<string>();
    for (let i = 0; i < samples; i += 1) {
      const code = generateShortCode();
      expect(code).toMatch(/^[A-Za-z0-9_]{6}$/);
      expect(isShortCode(code)).toBe(true);
      codes.add(code);
      for (const c of code) counts.set(c, (counts.get(c) ?? 0) + 1);
    }
    // Every symbol appears, and none is far from its share (about 1,905 of 120,000; σ ≈ 43).
    expect(counts.size).toBe(63);
    const expected = (samples * SHORT_CODE_LENGTH) / 63;
    for (const [symbol, count] of counts) expect(Math.abs(count - expected), symbol).toBeLessThan(expected * 0.2);
    // 63^6 codes: 20,000 draws practically never repeat.
    expect(codes.size).toBeGreaterThan(samples - 5);
  });

  it('recognises only well-formed codes', () => {
    for (const good of ['abc123', 'ABC_xy', '______', '0Aa_9z']) expect(isShortCode(good), good).toBe(true);
    for (const bad of ['', 'abc12', 'abc1234', 'abc-12', 'abc 12', 'abc%12', 'äbc123', 'abc12\n']) expect(isShortCode(bad), bad).toBe(false);
  });
});

describe('target URL check', () => {
  const problem = (url: string) => {
    try {
      normalizeTargetUrl(url);
      return null;
    } catch (error) {
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).kind).toBe('invalid');
      return (error as AppError).message;
    }
  };

  it('keeps plain http(s) URLs exactly as given', () => {
    for (const url of ['https://example.com', 'http://example.com/a?b=c#d', 'HTTPS://Example.COM/Path', 'https://user:pw@example.com:8443/x']) {
      expect(normalizeTargetUrl(url)).toBe(url);
    }
    expect(normalizeTargetUrl('  https://example.com/x  ')).toBe('https://example.com/x');
  });

  it('encodes spaces and non-ASCII so the URL is a valid Location header', () => {
    expect(normalizeTargetUrl('https://bücher.example/straße mit leer')).toBe('https://xn--bcher-kva.example/stra%C3%9Fe%20mit%20leer');
  });

  it('refuses other schemes, non-URLs and overlong URLs with a message naming url', () => {
    expect(problem('ftp://example.com/file')).toMatch(/^url: only http:\/\/ and https:\/\/ .*ftp:/);
    expect(problem('javascript:alert(1)')).toMatch(/^url: only http/);
    expect(problem('data:text/html,hi')).toMatch(/^url: only http/);
    expect(problem('example.com')).toMatch(/^url: must be an absolute/);
    expect(problem('http://')).toMatch(/^url: must be an absolute/);
    expect(problem('')).toMatch(/^url: must not be empty/);
    const base = 'https://example.com/';
    expect(problem(base + 'a'.repeat(2048 - base.length))).toBeNull();
    expect(problem(base + 'a'.repeat(2049 - base.length))).toMatch(/^url: must be at most 2048 characters/);
    // Within the limit as typed, over it once percent-encoded.
    expect(problem(base + 'é'.repeat(1000))).toMatch(/once encoded/);
  });
});
