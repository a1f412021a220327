import type { Db } from '../db/database.ts';
import type { Storage } from './storage.ts';

/** How many of the newest file records are looked up (the primary key's last entries: no scan). */
const SAMPLE = 5;

/**
 * With STORAGE=local, a file's bytes are in the DATA_DIR of the process that stored it, and the file
 * records say nothing more than the storage key. Processes sharing a database must therefore share
 * DATA_DIR; one started with another (for example a fresh, empty) DATA_DIR would answer 404 for every
 * file the others stored, and keep the files it stores to itself. It is refused at start-up: the
 * database has files, yet none of the newest few is in this DATA_DIR. Record ids sort by creation
 * time, and a record is written only once its bytes are stored, so the newest ones should be there.
 */
export async function checkDataDirHoldsFiles(db: Db, storage: Storage, dataDir: string): Promise<void> {
  if (storage.kind !== 'local') return;
  const sample = await db.selectFrom('files').select('storageKey').orderBy('id', 'desc').limit(SAMPLE).execute();
  if (sample.length === 0) return;
  for (const { storageKey } of sample) if (await storage.stat(storageKey)) return;
  throw new Error(
    `DATA_DIR (${dataDir}) holds none of the ${sample.length} newest files the database lists. With STORAGE=local, every process sharing a database must use the same DATA_DIR (a shared directory), which holds the files' bytes; start this process with that DATA_DIR (or, if the files are in S3, with STORAGE=s3 and the same bucket).`,
  );
}
