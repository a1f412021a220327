import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { freshDatabaseUrl } from '../support/server.ts';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrator.ts';

// Upgrades: a database left by any earlier version of Hoard starts on this one (contract §1: the
// migrations are applied at start and by `npm run cli -- migrate`).

async function freshHandle(): Promise<{ handle: DatabaseHandle; databaseUrl: string | undefined; dataDir: string }> {
  const databaseUrl = await freshDatabaseUrl();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-migrations-'));
  return { handle: openDatabase({ databaseUrl: databaseUrl ?? null, dataDir }), databaseUrl, dataDir };
}

describe('upgrades from earlier versions', () => {
  it('upgrades a database made by the first versions of migrations 0018-file-counts and 0020-search-documents', async () => {
    const { handle } = await freshHandle();
    try {
      await migrate(handle.db, '0021-search-sort-keys');
      // The first version of 0018 had no index of the files with a password; that of 0020 (SQLite)
      // numbered every file in one trigger, without files_fts_insert_unnumbered.
      await sql`drop index ${sql.id('files_userId_createdAt_withPassword')}`.execute(handle.db);
      if (handle.dialect === 'sqlite') await sql`drop trigger files_fts_insert_unnumbered`.execute(handle.db);
      const applied = await migrate(handle.db);
      expect(applied.at(-1)).toBe('0034-search-facets');
    } finally {
      await handle.close();
    }
  });
});
