import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { Db, Dialect } from './db/database.ts';
import type { Storage } from './storage/storage.ts';
import type { AuditLog } from './audit/audit-log.ts';
import type { SecretBox } from './auth/secret-box.ts';
import type { ListingCache } from './listing/listing-cache.ts';
import type { ArchiveCapacity } from './archives/capacity.ts';
import type { RequestLoad } from './shared/request-load.ts';

/** What the running instance is made of; handed to routes and background work. */
export interface AppContext {
  config: Config;
  db: Db;
  /** For reads that may scan a large share of an account (DatabaseHandle.reader). */
  reader: Db;
  dialect: Dialect;
  storage: Storage;
  log: Logger;
  audit: AuditLog;
  /** Encrypts secrets kept at rest (webhook signing secrets, the legacy upload credential). */
  secretBox: SecretBox;
  /** Reusable listing responses, valid while an account's listing version is unchanged. */
  listingCache: ListingCache;
  /** This process's slots for archive work (contract §9), shared by every archive route. */
  archiveCapacity: ArchiveCapacity;
  /** Requests this process is serving lately: background media work gives way to them. */
  load: RequestLoad;
  /** The background job runner: wake() after committing an enqueueJob() (src/jobs/queue.ts). */
  jobs: { wake(): void };
}
