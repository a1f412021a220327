import type { Db } from '../db/database.ts';
import { isStorageUnavailable, StorageConfigError, StorageUnavailableError, type Storage } from './storage.ts';

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
export async function checkDataDirHoldsFiles(db: Db, storage: Storage, dataDir: string, log: { warn(details: object, message: string): void }): Promise<void> {
  if (storage.kind !== 'local') return checkBucketHoldsFiles(db, storage, log);
  const sample = await db.selectFrom('files').select('storageKey').orderBy('id', 'desc').limit(SAMPLE).execute();
  if (sample.length === 0) return;
  for (const { storageKey } of sample) if (await storage.stat(storageKey)) return;
  throw new Error(
    `DATA_DIR (${dataDir}) holds none of the ${sample.length} newest files the database lists. With STORAGE=local, every process sharing a database must use the same DATA_DIR (a shared directory), which holds the files' bytes; start this process with that DATA_DIR (or, if the files are in S3, with STORAGE=s3 and the same bucket).`,
  );
}

/**
 * The same for an object store, and first whether its bucket can be used at all: a missing bucket
 * or refused credentials, and a bucket holding none of the newest files (an instance switched from
 * local disk to S3 without copying DATA_DIR/files into it, or pointed at another bucket), are
 * refused at start-up, saying what to set. A store that cannot be reached is let be: the process
 * starts, and requests answer 503 until it is back.
 */
async function checkBucketHoldsFiles(db: Db, storage: Storage, log: { warn(details: object, message: string): void }): Promise<void> {
  const sample = await db.selectFrom('files').select('storageKey').orderBy('id', 'desc').limit(SAMPLE).execute();
  try {
    await storage.checkAccess?.();
    if (sample.length === 0) return;
    // A store that accepts connections and answers nothing would hold the start for minutes (three
    // attempts of the client's silence each): after 10 s it is let be, as an unreachable one is.
    let timer: NodeJS.Timeout | undefined;
    const silent = new Promise<'silent'>((resolve) => (timer = setTimeout(() => resolve('silent'), 10_000)));
    const found = await Promise.race([
      (async () => {
        for (const { storageKey } of sample) if (await storage.stat(storageKey)) return true;
        return false;
      })(),
      silent,
    ]).finally(() => clearTimeout(timer));
    if (found === 'silent') throw new StorageUnavailableError('the object store did not answer within 10 s');
    if (found) return;
  } catch (error) {
    if (error instanceof StorageConfigError) throw new Error(`STORAGE=s3: ${error.message}`);
    if (!isStorageUnavailable(error)) throw error;
    log.warn({ target: storage.target, error: error instanceof Error ? error.message : String(error) }, 'the object store could not be reached to check its bucket at start-up; requests that need it answer 503 until it is back');
    return;
  }
  throw new Error(
    `STORAGE=s3: the bucket (${storage.target}) holds none of the ${sample.length} newest files the database lists. Every process sharing a database must use the same bucket; an instance moving from local disk to S3 copies DATA_DIR/files/ into the bucket first, each file under its path below DATA_DIR/files/ (its storage key).`,
  );
}
