import fs from 'node:fs';

/**
 * Makes `DATA_DIR` when it is missing, readable by this user alone: it holds the database, the
 * secret key and every private file's bytes (docs/decisions.md, "Running several processes"). A
 * directory that exists keeps the modes its operator gave it.
 */
export function ensureDataDir(dataDir: string): void {
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
}
