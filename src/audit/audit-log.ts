import type { Logger } from 'pino';
import type { Db } from '../db/database.ts';
import type { AuditEventsTable } from '../db/schema.ts';
import { newId } from '../db/ids.ts';
import { isForeignKeyViolation } from '../db/unique-violation.ts';

export type AuditEntry = Omit<AuditEventsTable, 'id' | 'createdAt'>;
type Recorded = AuditEntry & { id: string; createdAt: number };

const FLUSH_INTERVAL_MS = 250;
const MAX_BATCH = 500;

/**
 * Records token- and legacy-authorized requests. Entries are written in batches off the request
 * path, so an API call does not wait for an audit insert; close() writes what is left.
 */
export class AuditLog {
  private pending: Recorded[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private readonly db: Db;
  private readonly log: Logger;

  constructor(db: Db, log: Logger) {
    this.db = db;
    this.log = log;
  }

  record(entry: AuditEntry): void {
    this.pending.push({ ...entry, id: newId(), createdAt: Date.now() });
    if (this.pending.length >= MAX_BATCH) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), FLUSH_INTERVAL_MS);
  }

  flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return this.flushing;
    this.flushing = this.flushing.then(() => this.write(batch));
    return this.flushing;
  }

  /** Never rejects: a failure is logged, and the writes queued after it still run. */
  private async write(batch: Recorded[]): Promise<void> {
    try {
      await this.db.insertInto('auditEvents').values(batch).execute();
    } catch (error) {
      if (!isForeignKeyViolation(error)) {
        this.log.warn({ err: error, count: batch.length }, 'could not write audit records');
        return;
      }
      // An account deleted between its requests and this write takes its records with it, as its
      // earlier ones went; the other accounts' records of the batch are written without them.
      const accounts = [...new Set(batch.map((entry) => entry.userId))];
      const remaining = await this.db
        .selectFrom('users')
        .select('id')
        .where('id', 'in', accounts)
        .execute()
        .then((users) => new Set(users.map((user) => user.id)))
        .catch((lookup: unknown) => this.log.warn({ err: lookup, count: batch.length }, 'could not write audit records'));
      const kept = remaining ? batch.filter((entry) => remaining.has(entry.userId)) : [];
      if (kept.length > 0) await this.write(kept);
    }
  }

  close(): Promise<void> {
    return this.flush();
  }
}
