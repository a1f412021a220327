import fs from 'node:fs';

/**
 * Makes `DATA_DIR` when it is missing, readable by this user alone: it holds the database, the
 * secret key and every private file's bytes (docs/decisions.md, "Running several processes"). A
 * directory that exists keeps the modes its operator gave it.
 */
export function ensureDataDir(dataDir: string): void {
  try {
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  } catch (error) {
    // A file where the directory should be (or on its path): said in the operator's terms, not mkdir's.
    const code = (error as { code?: unknown }).code;
    if (code === 'EEXIST' || code === 'ENOTDIR') throw new Error(`DATA_DIR ${dataDir} is not a directory`, { cause: error });
    throw error;
  }
}
