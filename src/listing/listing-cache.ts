/**
 * Serialized listing responses (GET /api/files, /types, /timeline), reused while the account's
 * `listingVersion` is unchanged.
 *
 * The version is a database counter that triggers change in the same transaction as anything a
 * listing shows or filters by (migration 0008-listing-version), and every request reads it with its
 * credential (src/auth/authorize.ts), in the authentication query it runs anyway. An entry is used
 * only by a request that read the same version it was stored under, so a response is never older
 * than the last change committed before the request was authenticated, whichever process made the
 * change. An entry is stored under the version read before its listing was queried: its content may
 * be newer than that label, never older.
 *
 * Entries (bodies, keys and bookkeeping) are evicted least recently used first beyond the byte budget.
 */
/** The Map entry, its record and the Buffer object around a body, roughly. */
const ENTRY_OVERHEAD_BYTES = 200;

export class ListingCache {
  private readonly entries = new Map<string, { version: number; body: Buffer }>();
  private bytes = 0;
  private readonly maxBytes: number;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  /**
   * The response body for `key` (a canonical description of the request: route, parameters and
   * anything else the body depends on) of the account at `version`, made by `produce` unless a
   * body for exactly that version is kept.
   */
  async body(userId: string, version: number, key: string, produce: () => Promise<string>): Promise<Buffer> {
    // A version that is not a number (a principal built without one) never matches: no reuse.
    if (this.maxBytes === 0 || !Number.isSafeInteger(version)) return Buffer.from(await produce());
    const id = entryId(userId, key);
    const kept = this.entries.get(id);
    if (kept?.version === version) {
      // Most recently used last in the Map's order.
      this.entries.delete(id);
      this.entries.set(id, kept);
      return kept.body;
    }
    // Kept encoded: a response is then written to the socket as it is, not converted on every send.
    const body = Buffer.from(await produce());
    this.store(id, version, body);
    return body;
  }

  private store(id: string, version: number, body: Buffer): void {
    const size = sizeOf(id, body.length);
    if (size > this.maxBytes / 4) return;
    const kept = this.entries.get(id);
    // A slow request must not replace what a request authenticated later stored.
    if (kept && kept.version > version) return;
    if (kept) {
      this.entries.delete(id);
      this.bytes -= sizeOf(id, kept.body.length);
    }
    this.entries.set(id, { version, body });
    this.bytes += size;
    for (const [oldest, entry] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= sizeOf(oldest, entry.body.length);
    }
  }

  /** Kept entries and their size in bytes (for tests and diagnostics). */
  stats(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }
}

const entryId = (userId: string, key: string) => `${userId}\u0000${key}`;

/** What an entry costs: its body, its key (two bytes a character, as JavaScript holds it at worst) and a little bookkeeping. */
function sizeOf(id: string, bodyBytes: number): number {
  return bodyBytes + 2 * id.length + ENTRY_OVERHEAD_BYTES;
}

/** The budget an entry of `bodyBytes` for this account and key takes (for tests and sizing). */
export function entryBytes(userId: string, key: string, bodyBytes: number): number {
  return sizeOf(entryId(userId, key), bodyBytes);
}
