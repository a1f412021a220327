import type { Logger } from 'pino';
import type { Db } from '../db/database.ts';
import type { AuditEventsTable } from '../db/schema.ts';
import { newId } from '../db/ids.ts';

export type AuditEntry = Omit<AuditEventsTable, 'id' | 'createdAt'>;

const FLUSH_INTERVAL_MS = 250;
const MAX_BATCH = 500;

/**
 * Records token- and legacy-authorized requests. Entries are written in batches off the request
 * path, so an API call does not wait for an audit insert; close() writes what is left.
 */
export class AuditLog {
  private pending: Array<AuditEntry & { id: string; createdAt: number }> = [];
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
    this.flushing = this.flushing.then(() =>
      this.db
        .insertInto('auditEvents')
        .values(batch)
        .execute()
        .then(
          () => undefined,
          // An account deleted between the request and the flush takes its records with it.
          (error: unknown) => this.log.warn({ err: error, count: batch.length }, 'could not write audit records'),
        ),
    );
    return this.flushing;
  }

  close(): Promise<void> {
    return this.flush();
  }
}
