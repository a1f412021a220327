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

/**
 * What to tell the operator about a `DATA_DIR` every user of the machine can read or pass through,
 * or null. One made before Hoard made it private (an upgraded instance), or by hand under the usual
 * umask, keeps its modes, and with them the database and every private file's bytes readable by
 * all; a group's access is the operator's choice (for backups, say).
 */
export function dataDirExposure(dataDir: string): string | null {
  const mode = fs.statSync(dataDir).mode & 0o777;
  if ((mode & 0o005) === 0) return null;
  return `DATA_DIR ${dataDir} can be read by every user of this machine (mode ${mode.toString(8)}): it holds the database, the secret key and every private file's bytes; make it yours alone with: chmod 700 ${dataDir}`;
}
