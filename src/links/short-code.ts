import { randomInt } from 'node:crypto';

/** The characters of a short code: letters, digits and underscore (63 symbols). */
export const SHORT_CODE_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_';
/** Short code: six characters (spec, Limits; Short link). */
export const SHORT_CODE_LENGTH = 6;

const shortCodePattern = new RegExp(`^[A-Za-z0-9_]{${SHORT_CODE_LENGTH}}$`);

/**
 * A new random short code. `crypto.randomInt` draws each character uniformly from the alphabet
 * (it rejects out-of-range samples internally), so there is no modulo bias: 63^6 ≈ 6.3e10 codes.
 */
export function generateShortCode(): string {
  let code = '';
  for (let i = 0; i < SHORT_CODE_LENGTH; i += 1) code += SHORT_CODE_ALPHABET[randomInt(SHORT_CODE_ALPHABET.length)];
  return code;
}

/** Whether a string could be a short code at all; anything else needs no database lookup. */
export function isShortCode(value: string): boolean {
  return shortCodePattern.test(value);
}
