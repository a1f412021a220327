import { randomBytes } from 'node:crypto';

const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';

// Random bytes drawn from the CSPRNG a few KiB at a time and handed out once each: a call into
// OpenSSL per ID (every audited request makes one) costs more than the rest of making the ID.
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let poolOffset = 0;

function nextRandomByte(): number {
  if (poolOffset === pool.length) {
    pool = randomBytes(POOL_BYTES);
    poolOffset = 0;
  }
  return pool[poolOffset++]!;
}

/** Random lowercase alphanumeric string; rejection sampling keeps every character equally likely. */
export function randomLowerAlnum(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = nextRandomByte();
    if (byte < 252) out += alphabet[byte % 36];
  }
  return out;
}

let lastMs = 0;
let sequence = 0;

/**
 * Record IDs: 20 characters of [a-z0-9] that sort by creation time: 9 characters of the millisecond
 * timestamp, 2 of a per-process sequence within that millisecond, 9 random (about 46 bits). Lists
 * ordered by (createdAt, id) therefore keep creation order even within one millisecond.
 */
export function newId(): string {
  const now = Date.now();
  sequence = now === lastMs ? (sequence + 1) % 1296 : 0;
  lastMs = now;
  return now.toString(36).padStart(9, '0') + sequence.toString(36).padStart(2, '0') + randomLowerAlnum(9);
}
