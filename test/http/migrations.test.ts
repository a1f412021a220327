import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { freshDatabaseUrl } from '../support/server.ts';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.ts';
import { applyMigrations, migrate, migrations } from '../../src/db/migrator.ts';

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

describe('an upgrade stopped part-way', () => {
  it('leaves nothing of the migration it was in, and the next start applies it whole', async () => {
    const { handle, databaseUrl, dataDir } = await freshHandle();
    await migrate(handle.db);
    await handle.close();
    // A process killed (SIGKILL) inside a migration, after its first statements.
    const child = spawn(process.execPath, ['test/support/interrupted-migration.ts', dataDir, ...(databaseUrl ? [databaseUrl] : [])], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('inside') && resolve());
      child.once('exit', (code) => reject(new Error(`the migrating process ended first (${code})`)));
    });
    child.kill('SIGKILL');
    await exited;

    const reopened = openDatabase({ databaseUrl: databaseUrl ?? null, dataDir });
    try {
      const tables = await reopened.db.introspection.getTables();
      expect(tables.map((t) => t.name)).not.toContain('interruptedMigration');
      const recorded = await reopened.db.selectFrom('kysely_migration' as never).select('name' as never).execute();
      expect(recorded.map((r) => (r as { name: string }).name)).not.toContain('9999-interrupted');
      // The next start applies it, whole.
      const again = {
        async up(db: Kysely<any>): Promise<void> {
          await db.schema.createTable('interruptedMigration').addColumn('n', 'integer').execute();
          await sql`insert into ${sql.table('interruptedMigration')} (n) values (1), (2), (3)`.execute(db);
        },
      };
      expect(await applyMigrations(reopened.db, { ...migrations, '9999-interrupted': again })).toEqual(['9999-interrupted']);
      const rows = await sql<{ n: number }>`select n from ${sql.table('interruptedMigration')} order by n`.execute(reopened.db);
      expect(rows.rows.map((r) => Number(r.n))).toEqual([1, 2, 3]);
    } finally {
      await reopened.close();
    }
  });

  it('leaves nothing of a migration that fails, nor of those applied before it in the same start', async () => {
    const { handle } = await freshHandle();
    try {
      await migrate(handle.db, '0033-untagged-timeline-indexes');
      const failing = {
        async up(db: Kysely<any>): Promise<void> {
          await db.schema.createTable('failedMigration').addColumn('n', 'integer').execute();
          throw new Error('this migration fails');
        },
      };
      await expect(applyMigrations(handle.db, { ...migrations, '9999-failing': failing })).rejects.toThrow('this migration fails');
      const tables = (await handle.db.introspection.getTables()).map((t) => t.name);
      expect(tables).not.toContain('failedMigration');
      // 0034, pending before the failing one, was rolled back with it: applied again it succeeds.
      expect(tables).not.toContain('searchFacetValues');
      expect(await migrate(handle.db)).toEqual(['0034-search-facets']);
    } finally {
      await handle.close();
    }
  });

  it('applies each migration once when two processes start on one database at the same moment', async () => {
    const { handle, databaseUrl, dataDir } = await freshHandle();
    const other = openDatabase({ databaseUrl: databaseUrl ?? null, dataDir });
    try {
      const [first, second] = await Promise.all([migrate(handle.db), migrate(other.db)]);
      expect([...first, ...second].sort()).toEqual(Object.keys(migrations).sort());
    } finally {
      await Promise.all([handle.close(), other.close()]);
    }
  });

  it('refuses, saying why, a database that a newer version of Hoard has upgraded', async () => {
    const { handle } = await freshHandle();
    try {
      await migrate(handle.db);
      await sql`insert into kysely_migration (name, timestamp) values ('9999-from-the-future', '2030-01-01T00:00:00.000Z')`.execute(handle.db);
      await expect(migrate(handle.db)).rejects.toThrow(
        'The database was upgraded by a newer version of Hoard (it has migration 9999-from-the-future, which this version does not know): run that version, or restore a backup made before the upgrade',
      );
    } finally {
      await handle.close();
    }
  });
});
