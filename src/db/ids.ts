import { randomBytes } from 'node:crypto';

const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** Random lowercase alphanumeric string; rejection sampling keeps every character equally likely. */
export function randomLowerAlnum(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 252) out += alphabet[byte % 36];
      if (out.length === length) break;
    }
  }
  return out;
}

/** Record IDs: 20 characters of [a-z0-9], about 103 bits. */
export function newId(): string {
  return randomLowerAlnum(20);
}
