import { spawn } from 'node:child_process';
import Database from 'better-sqlite3';
import pg from 'pg';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql, type Kysely, type Migration } from 'kysely';
import { describe, expect, it } from 'vitest';
import { freshDatabaseUrl, startTestServer } from '../support/server.ts';
import { Client, signUp } from '../support/client.ts';
import { hashPassword } from '../../src/auth/passwords.ts';
import { ensureBuiltinRoles } from '../../src/auth/roles.ts';
import { ensureSettings, initialSettings } from '../../src/settings/instance-settings.ts';
import { createToken, uploadFile } from '../support/uploads.ts';
import { fileRow } from '../support/file-rows.ts';
import * as first0003 from '../support/earlier-migrations/0003-files-first.ts';
import * as first0020 from '../support/earlier-migrations/0020-search-documents-first.ts';
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
      expect(applied.at(-1)).toBe(Object.keys(migrations).at(-1));
    } finally {
      await handle.close();
    }
  });
});

/** A database made by the first version of a migration, upgraded to this version, and a server on it. */
async function upgradedFrom(name: string, first: Migration, seed?: (db: DatabaseHandle['db'], dataDir: string) => Promise<void>) {
  const { handle, databaseUrl, dataDir } = await freshHandle();
  await applyMigrations(handle.db, { ...migrations, [name]: first }, name);
  // The library of the version before this one, then the upgrade.
  await migrate(handle.db, '0034-search-facets');
  await seed?.(handle.db, dataDir);
  await migrate(handle.db);
  await handle.close();
  return startTestServer({}, { databaseUrl, dataDir });
}

/** An account with 30 files, a third of them tagged, two in a folder, and a short link to one. */
async function seedLibrary(db: DatabaseHandle['db'], dataDir: string): Promise<void> {
  const now = Date.now();
  await db
    .insertInto('users')
    .values({ id: 'seededowner', email: 'seeded@example.test', name: 'Seeded', passwordHash: 'x', urlId: 'seededurl', emailVerified: 1, quotaBytes: null, uploadToken: null, uploadTokenHash: null, defaultProfileId: null, uploadDefaults: null, createdAt: now, updatedAt: now })
    .execute();
  await db.insertInto('folders').values({ id: 'seededfolder', userId: 'seededowner', name: 'F', parentId: null, createdAt: now, updatedAt: now }).execute();
  await db.insertInto('tags').values({ id: 'seededtag', userId: 'seededowner', name: 't', createdAt: now }).execute();
  const files = Array.from({ length: 30 }, (_, i) => fileRow('seededowner', `seededfile${i}`, { name: `invoice-${i}.txt`, sha256: 'ab'.repeat(32), createdAt: now - (30 - i) * 1000, folderId: i < 2 ? 'seededfolder' : null }));
  await db.insertInto('files').values(files).execute();
  // Their bytes (a byte each), where local storage keeps them.
  fs.mkdirSync(path.join(dataDir, 'files', 'test'), { recursive: true });
  for (const file of files) fs.writeFileSync(path.join(dataDir, 'files', file.storageKey), 'x');
  await db.insertInto('fileTags').values(files.filter((_, i) => i % 3 === 0).map((f) => ({ fileId: f.id, tagId: 'seededtag', excluded: 0 }))).execute();
}

describe('upgrades from the first versions of migrations edited after they landed', () => {
  it('0003-files: a chunked upload, which has no SHA-256, completes; the files, their tags and counts are kept', async () => {
    const server = await upgradedFrom('0003-files', first0003, seedLibrary);
    try {
      const db = server.ctx.db;
      const count = async (table: 'files' | 'fileTags') => Number((await db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
      expect([await count('files'), await count('fileTags')]).toEqual([30, 10]);
      const counted = await db.selectFrom('fileCounts').select(['dimension', 'value', 'files']).where('userId', '=', 'seededowner').where('dimension', 'in', ['tag', 'folder']).execute();
      expect(Object.fromEntries(counted.map((r) => [`${r.dimension}/${r.value}`, Number(r.files)]))).toEqual({ 'tag/seededtag': 10, 'folder/seededfolder': 2, 'folder/': 28 });
      // The foreign keys of the files' tags still name the files, and still cascade.
      await db.deleteFrom('files').where('id', '=', 'seededfile0').execute();
      expect(await count('fileTags')).toBe(9);
      expect(Number((await db.selectFrom('users').select('fileCount').where('id', '=', 'seededowner').executeTakeFirstOrThrow()).fileCount)).toBe(29);

      // The seeded account, signed in.
      await db.updateTable('users').set({ passwordHash: await hashPassword('correct horse battery') }).where('id', '=', 'seededowner').execute();
      const owner = new Client(server.baseUrl);
      expect((await owner.post('/api/auth/login', { email: 'seeded@example.test', password: 'correct horse battery' })).status).toBe(200);
      expect((await owner.get('/api/files?search=invoice')).body.pagination.total).toBe(29);
      const token = await createToken(owner, ['files:upload']);
      const scripted = new Client(server.baseUrl);
      const started = await scripted.post('/api/files/chunks', { filename: 'joined.txt', size: 11 }, { token });
      expect(started.status, started.text).toBe(200);
      const uploadId = started.body.data.uploadId as string;
      const part = await scripted.request('PUT', `/api/files/chunks/${uploadId}/part/1`, { body: Buffer.from('hello world'), token, headers: { 'content-type': 'application/octet-stream' } });
      expect(part.status, part.text).toBe(200);
      const completed = await scripted.post(`/api/files/chunks/${uploadId}/complete`, { parts: [{ PartNumber: 1, ETag: part.body.data.etag }] }, { token });
      expect(completed.status, completed.text).toBe(200);
      const raw = await new Client(server.baseUrl).get(new URL(completed.body.rawUrl).pathname);
      expect(raw.text).toBe('hello world');
      // And the search index still finds the files by name.
      const search = await owner.get('/api/files?search=joined');
      expect(search.body.data.map((f: { name: string }) => f.name)).toEqual(['joined.txt']);
    } finally {
      await server.close();
    }
  });

  it("0020-search-documents: an account's document numbers stay below 2^32; on SQLite each upload keeps the latest upload time, and an earlier one marks the files unordered", async () => {
    const server = await upgradedFrom('0020-search-documents', first0020);
    try {
      const owner = await signUp(server.baseUrl);
      expect((await uploadFile(owner, 'one.txt', 'one')).status).toBe(200);
      await expect(server.ctx.db.updateTable('users').set({ docSeq: 2 ** 32 }).where('id', '=', owner.userId).execute()).rejects.toThrow(/check/i);
      if (server.ctx.dialect === 'sqlite') {
        const account = () => server.ctx.db.selectFrom('users').select(['lastUploadAt', 'docsUnordered']).where('id', '=', owner.userId).executeTakeFirstOrThrow();
        const latest = Number((await server.ctx.db.selectFrom('files').select((eb) => eb.fn.max('createdAt').as('at')).where('userId', '=', owner.userId).executeTakeFirstOrThrow()).at);
        expect(Number((await account()).lastUploadAt)).toBe(latest);
        expect(Number((await account()).docsUnordered)).toBe(0);
        // A file that arrives with an earlier upload time.
        await server.ctx.db.insertInto('files').values(fileRow(owner.userId, 'earlierfile', { createdAt: latest - 60_000 })).execute();
        expect(Number((await account()).docsUnordered)).toBe(1);
        // And the search index's deletes are merged by the daily job, not inside writes (0034-search-facets).
        const config = await sql<{ k: string; v: number }>`select k, v from filesSearch_config where k = 'deletemerge'`.execute(server.ctx.db);
        expect(config.rows.map((r) => [r.k, Number(r.v)])).toEqual([['deletemerge', 0]]);
      }
    } finally {
      await server.close();
    }
  });
});

describe('search text folded by an earlier version', () => {
  it('is folded again, so the capital sharp s and its other spellings find each other in names and OCR text', async () => {
    const server = await startTestServer();
    try {
      const owner = await signUp(server.baseUrl);
      const uploaded = await uploadFile(owner, 'GROẞE-Liste.txt', 'a list');
      expect(uploaded.status, uploaded.text).toBe(200);
      const plain = await uploadFile(owner, 'plain.txt', 'plain');
      expect(plain.status, plain.text).toBe(200);
      // What 0006-listing's folding stored: "ẞ" became "ß", not "ss".
      await server.ctx.db
        .updateTable('files')
        .set({ ocrText: 'STRAẞE 5', searchName: 'große-liste.txt', searchOcr: 'straße 5' })
        .where('name', '=', 'GROẞE-Liste.txt')
        .execute();
      await server.ctx.db.deleteFrom('kysely_migration' as never).where('name' as never, '=', '0036-search-refold' as never).execute();
      expect(await migrate(server.ctx.db)).toEqual(['0036-search-refold']);
      const rows = await server.ctx.db.selectFrom('files').select(['name', 'searchName', 'searchOcr']).where('userId', '=', owner.userId).orderBy('name').execute();
      expect(rows).toEqual([
        { name: 'GROẞE-Liste.txt', searchName: 'grosse-liste.txt', searchOcr: 'strasse 5' },
        { name: 'plain.txt', searchName: 'plain.txt', searchOcr: null },
      ]);
      for (const search of ['große', 'GROSSE', 'strasse 5', 'STRAẞE']) {
        const found = await owner.get(`/api/files?search=${encodeURIComponent(search)}`);
        expect(found.body.data.map((f: { name: string }) => f.name), search).toEqual(['GROẞE-Liste.txt']);
      }
    } finally {
      await server.close();
    }
  });
});

describe('search text stored before white space and underscores were folded alike', () => {
  it('is folded again, so "data sheet" finds data_sheet.csv and text with line breaks, and rows written without the columns follow', async () => {
    const server = await startTestServer();
    try {
      const owner = await signUp(server.baseUrl);
      for (const name of ['Data Sheet.csv', 'plain.txt']) {
        const uploaded = await uploadFile(owner, name, 'a,b');
        expect(uploaded.status, uploaded.text).toBe(200);
      }
      await server.ctx.db
        .updateTable('files')
        .set({ ocrText: 'DATA\nsheet', searchName: 'data_sheet.csv', searchOcr: 'data\nsheet' })
        .where('name', '=', 'Data_Sheet.csv')
        .execute();
      const before = await owner.get(`/api/files?search=${encodeURIComponent('data sheet')}`);
      expect(before.body.data).toEqual([]);
      await server.ctx.db.deleteFrom('kysely_migration' as never).where('name' as never, '=', '0037-search-spaces' as never).execute();
      expect(await migrate(server.ctx.db)).toEqual(['0037-search-spaces']);
      const rows = await server.ctx.db.selectFrom('files').select(['name', 'searchName', 'searchOcr']).where('userId', '=', owner.userId).orderBy('name').execute();
      expect(rows).toEqual([
        { name: 'Data_Sheet.csv', searchName: 'data sheet.csv', searchOcr: 'data sheet' },
        { name: 'plain.txt', searchName: 'plain.txt', searchOcr: null },
      ]);
      for (const search of ['data sheet', 'DATA_SHEET', 'a s']) {
        const found = await owner.get(`/api/files?search=${encodeURIComponent(search)}`);
        expect(found.body.data.map((f: { name: string }) => f.name), search).toEqual(['Data_Sheet.csv']);
        expect(found.body.pagination.total, search).toBe(1);
      }
      // The backstop for a row written without the search columns turns underscores into spaces too.
      const written = fileRow(owner.userId, 'written-by-hand', { name: 'Hand_Made.txt', ocrText: 'SOME\ttext', size: 1, sha256: '0'.repeat(64) });
      await server.ctx.db.insertInto('files').values({ ...written, searchName: null, searchOcr: null }).execute();
      const backstopped = await server.ctx.db.selectFrom('files').select(['searchName', 'searchOcr']).where('id', '=', 'written-by-hand').executeTakeFirstOrThrow();
      expect(backstopped).toEqual({ searchName: 'hand made.txt', searchOcr: 'some text' });
    } finally {
      await server.close();
    }
  });
});

describe('search text stored before accents were left out', () => {
  it('is folded again, so "cafe" finds Café and "lodz" finds Łódź, in names and recognised text', async () => {
    const server = await startTestServer();
    try {
      const owner = await signUp(server.baseUrl);
      for (const name of ['Café Łódź.txt', 'plain.txt']) {
        const uploaded = await uploadFile(owner, name, 'text');
        expect(uploaded.status, uploaded.text).toBe(200);
      }
      // As the folding before this migration stored them.
      await server.ctx.db
        .updateTable('files')
        .set({ ocrText: 'Crème BRÛLÉE', searchName: 'café łódź.txt', searchOcr: 'crème brûlée' })
        .where('name', '=', 'Café_Łódź.txt')
        .execute();
      expect((await owner.get('/api/files?search=cafe')).body.data).toEqual([]);
      await server.ctx.db.deleteFrom('kysely_migration' as never).where('name' as never, '=', '0039-search-accents' as never).execute();
      expect(await migrate(server.ctx.db)).toEqual(['0039-search-accents']);
      const rows = await server.ctx.db.selectFrom('files').select(['name', 'searchName', 'searchOcr']).where('userId', '=', owner.userId).orderBy('name').execute();
      expect(rows).toEqual([
        { name: 'Café_Łódź.txt', searchName: 'cafe lodz.txt', searchOcr: 'creme brulee' },
        { name: 'plain.txt', searchName: 'plain.txt', searchOcr: null },
      ]);
      for (const search of ['cafe', 'CAFÉ', 'lodz', 'Łódź', 'creme brulee', 'brûlée']) {
        const found = await owner.get(`/api/files?search=${encodeURIComponent(search)}`);
        expect(found.body.data.map((f: { name: string }) => f.name), search).toEqual(['Café_Łódź.txt']);
        expect(found.body.pagination.total, search).toBe(1);
      }
    } finally {
      await server.close();
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
      // 0034 and 0035, pending before the failing one, were rolled back with it: applied again they succeed.
      expect(tables).not.toContain('searchFacetValues');
      expect(await migrate(handle.db)).toEqual(['0034-search-facets', '0035-earlier-versions', '0036-search-refold', '0037-search-spaces', '0038-ticket-password', '0039-search-accents', '0040-webhook-secret-rotation', '0041-session-confirmed', '0042-account-suspension', '0043-invite-notes', '0044-admin-actions', '0045-account-notices', '0046-folder-shares', '0047-folder-share-expiry', '0048-folder-share-subfolders', '0049-totp-used-steps', '0050-completion-claims', '0051-ocr-scan-index', '0052-tag-combinations', '0053-batched-file-changes', '0054-linear-tag-changes', '0055-tag-folder-index']);
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

  it('waits for another process that is upgrading the same database, longer than a usual lock, and applies nothing twice', async () => {
    const { handle, databaseUrl, dataDir } = await freshHandle();
    await migrate(handle.db);
    await handle.close();
    // Another process inside a migration for 7 s, past the 5 s a statement waits for SQLite's write lock.
    const child = spawn(process.execPath, ['test/support/interrupted-migration.ts', dataDir, ...(databaseUrl ? [databaseUrl] : [])], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, HOLD_MS: '7000' },
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('inside') && resolve());
      child.once('exit', (code) => reject(new Error(`the migrating process ended first (${code})`)));
    });
    const reopened = openDatabase({ databaseUrl: databaseUrl ?? null, dataDir });
    try {
      const same = {
        async up(db: Kysely<any>): Promise<void> {
          await db.schema.createTable('interruptedMigration').addColumn('n', 'integer').execute();
        },
      };
      const began = performance.now();
      let told = 0;
      expect(await applyMigrations(reopened.db, { ...migrations, '9999-interrupted': same }, undefined, () => told++)).toEqual([]);
      expect(performance.now() - began).toBeGreaterThan(5000);
      // The wait is said once on SQLite (where the migrator waits by itself on PostgreSQL, nothing is).
      expect(told).toBe(databaseUrl ? 0 : 1);
      expect(await exited).toBe(0);
      const rows = await sql<{ n: number }>`select n from ${sql.table('interruptedMigration')} order by n`.execute(reopened.db);
      expect(rows.rows.map((r) => Number(r.n))).toEqual([1, 2, 3]);
    } finally {
      child.kill('SIGKILL');
      await reopened.close();
    }
  }, 30_000);

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

  it('starts on an up-to-date database while another program holds its write lock (nothing to apply, nothing locked)', async () => {
    const { handle, databaseUrl, dataDir } = await freshHandle();
    const initial = initialSettings({ maxUploadSize: 1_000_000, defaultQuota: 0 });
    await migrate(handle.db);
    await ensureBuiltinRoles(handle.db);
    await ensureSettings(handle.db, initial);
    await handle.close();
    // The write lock held by another program (a hand-run sqlite3 or psql session).
    const release = await (async () => {
      if (databaseUrl) {
        const client = new pg.Client({ connectionString: databaseUrl });
        await client.connect();
        await client.query('begin');
        // What a writer holds: reads go on, inserts wait.
        await client.query('lock table settings, roles in share row exclusive mode');
        return async () => void (await client.query('commit'), await client.end());
      }
      const other = new Database(path.join(dataDir, 'hoard.sqlite'));
      other.exec('begin immediate');
      return async () => void (other.exec('commit'), other.close());
    })();
    const reopened = openDatabase({ databaseUrl: databaseUrl ?? null, dataDir });
    try {
      const began = performance.now();
      expect(await migrate(reopened.db)).toEqual([]);
      // And the rest of what a start makes sure of (src/server.ts, prepareDatabase).
      await ensureBuiltinRoles(reopened.db);
      await ensureSettings(reopened.db, initial);
      expect(performance.now() - began).toBeLessThan(2000);
    } finally {
      await release();
      await reopened.close();
    }
  });
});

describe('two-factor steps used before each step was kept apart', () => {
  it("keeps the last accepted step as used, so that step's code still works once only", async () => {
    const { handle } = await freshHandle();
    try {
      await migrate(handle.db, '0048-folder-share-subfolders');
      const now = Date.now();
      const account = (id: string, totpLastStep: number | null) => ({ id, email: `${id}@example.test`, name: id, passwordHash: 'x', urlId: `${id}url`, emailVerified: 1, quotaBytes: null, uploadToken: null, uploadTokenHash: null, defaultProfileId: null, uploadDefaults: null, createdAt: now, updatedAt: now, totpLastStep });
      await handle.db.insertInto('users').values([account('withstep', 1_234_567), account('withoutstep', null)] as never).execute();
      expect(await migrate(handle.db, '0049-totp-used-steps')).toEqual(['0049-totp-used-steps']);
      const rows = await handle.db.selectFrom('totpUsedSteps').select(['userId', 'step']).execute();
      expect(rows.map((row) => [row.userId, Number(row.step)])).toEqual([['withstep', 1_234_567]]);
      const columns = (await handle.db.introspection.getTables()).find((table) => table.name === 'users')!.columns.map((column) => column.name);
      expect(columns).not.toContain('totpLastStep');
    } finally {
      await handle.close();
    }
  });
});
