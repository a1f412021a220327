import pino from 'pino';
import type { Config } from '../config.ts';
import type { AppContext } from '../context.ts';
import { ArchiveCapacity } from '../archives/capacity.ts';
import { AuditLog } from '../audit/audit-log.ts';
import { ensureBuiltinRoles } from '../auth/roles.ts';
import type { SecretBox } from '../auth/secret-box.ts';
import { openSecretBox } from '../secret-key-check.ts';
import { openDatabase } from '../db/database.ts';
import { migrate } from '../db/migrator.ts';
import { ListingCache } from '../listing/listing-cache.ts';
import { ensureSettings, initialSettings } from '../settings/instance-settings.ts';
import { RequestLoad } from '../shared/request-load.ts';
import { createStorage } from '../storage/create-storage.ts';
import { checkDataDirHoldsFiles } from '../storage/data-dir-check.ts';

export interface OfflineInstance {
  ctx: AppContext;
  close(): Promise<void>;
}

/**
 * The parts of a running instance (src/server.ts) that domain code needs, for a command that works
 * on the same database and storage without serving HTTP: the database (migrated), the storage (the
 * same DATA_DIR check a server makes at start), the secret box and the audit log. It runs no
 * background jobs: the jobs its work commits (webhook deliveries, media work, clean-ups) are rows of
 * the shared queue, which every server process polls (src/jobs/queue.ts), so a running server starts
 * them within a poll and a server started later finds them. Log lines go to stderr, so that stdout
 * keeps the command's own output.
 */
export async function openOfflineInstance(config: Config, options: { poolSize?: number } = {}): Promise<OfflineInstance> {
  const log = pino({ level: config.logLevel }, pino.destination({ dest: 2, sync: true }));
  const database = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: options.poolSize ?? 4, log });
  try {
    await migrate(database.db);
    await ensureBuiltinRoles(database.db);
    await ensureSettings(database.db, initialSettings(config));
  } catch (error) {
    await database.close();
    throw error;
  }
  const storage = await createStorage({ kind: config.storage, dataDir: config.dataDir, ...(config.s3 ? { s3: config.s3 } : {}) });
  let secretBox: SecretBox;
  try {
    await checkDataDirHoldsFiles(database.db, storage, config.dataDir, log);
    secretBox = await openSecretBox(database.db, config);
  } catch (error) {
    await storage.close();
    await database.close();
    throw error;
  }
  const audit = new AuditLog(database.db, log);
  const ctx: AppContext = {
    config,
    db: database.db,
    reader: database.reader,
    dialect: database.dialect,
    storage,
    log,
    audit,
    secretBox,
    listingCache: new ListingCache(config.listingCacheBytes),
    archiveCapacity: new ArchiveCapacity(config.archiveConcurrency),
    load: new RequestLoad(),
    jobs: { wake: () => undefined },
  };
  return {
    ctx,
    async close() {
      await audit.close();
      await storage.close();
      await database.close();
    },
  };
}
