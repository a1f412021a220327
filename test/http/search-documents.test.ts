import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CompiledQuery, sql, type Insertable } from 'kysely';
import { describe, expect, it } from 'vitest';
import { fileRow } from '../support/file-rows.ts';
import { freshDatabaseUrl, startTestServer } from '../support/server.ts';
import { Client } from '../support/client.ts';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.ts';
import type { FilesTable } from '../../src/db/schema.ts';
import { migrate } from '../../src/db/migrator.ts';
import { createToken } from '../../src/tokens/named-tokens.ts';
import { filteredFiles, orderedBy } from '../../src/listing/file-query.ts';
import { parseListQuery } from '../../src/listing/parameters.ts';
import { foldForSearch } from '../../src/shared/search-text.ts';

/** Accounts `owners` and their `files`, written straight into the database, with empty stand-ins for the bytes. */
async function insertAccountsAndFiles(handle: DatabaseHandle, dataDir: string, owners: string[], files: Insertable<FilesTable>[]): Promise<void> {
  const now = Date.now();
  for (const id of owners) {
    await handle.db
      .insertInto('users')
      .values({ id, email: `${id}@example.test`, name: id, passwordHash: 'x', urlId: `${id}url`, emailVerified: 1, quotaBytes: null, uploadToken: null, uploadTokenHash: null, defaultProfileId: null, uploadDefaults: null, createdAt: now, updatedAt: now })
      .execute();
  }
  await handle.db.insertInto('files').values(files).execute();
  // The bytes' stand-ins: a server refuses a DATA_DIR that holds none of the database's files.
  fs.mkdirSync(path.join(dataDir, 'files', 'test'), { recursive: true });
  for (const f of files) fs.writeFileSync(path.join(dataDir, 'files', f.storageKey), '');
}

// Migration 0020-search-documents numbers the files that exist when it runs (SQLite), as migration
// 0025-search-names copies their names (PostgreSQL); searches, their totals and their timelines then
// answer through the index exactly as over the files themselves.
describe('migration 0020-search-documents', () => {
  it('numbers existing files per account in upload order, and search finds them through the index', async () => {
    const databaseUrl = await freshDatabaseUrl();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-documents-'));
    const handle = openDatabase({ databaseUrl: databaseUrl ?? null, dataDir });
    const base = Date.UTC(2021, 0, 1);
    const day = 86_400_000;
    const owners = ['docsowner1', 'docsowner2'];
    // Inserted in no particular order, as files of an older version may be; the same words in both accounts.
    const files = Array.from({ length: 90 }, (_, i) => {
      const owner = owners[i % 2]!;
      const createdAt = base + ((i * 37) % 90) * 5 * day;
      return fileRow(owner, `docsfile${String(i).padStart(3, '0')}`, { name: i % 3 ? `Beach-${i}.txt` : `plan-${i}.txt`, ocrText: i % 10 === 0 ? 'beach towel' : null, createdAt });
    });
    let token = '';
    try {
      await migrate(handle.db, '0019-upload-counts');
      await insertAccountsAndFiles(handle, dataDir, owners, files);
      await migrate(handle.db);
      token = (await createToken(handle.db, handle.dialect, owners[0]!, { name: 'reader', scopes: ['files:read'] })).secret;
      if (handle.dialect === 'sqlite') {
        // Each account's numbers are one range, in upload order, and it is marked as such.
        for (const [n, owner] of owners.entries()) {
          const rows = await handle.db.selectFrom('files').select(['id', 'docId', 'createdAt']).where('userId', '=', owner).orderBy('docId').execute();
          const account = await handle.db.selectFrom('users').select(['accountNo', 'docSeq', 'docsUnordered']).where('id', '=', owner).executeTakeFirstOrThrow();
          expect(account).toEqual({ accountNo: n + 1, docSeq: rows.length, docsUnordered: 0 });
          expect(rows.map((r) => r.docId)).toEqual(rows.map((_, i) => (n + 1) * 2 ** 32 + i + 1));
          expect(rows.map((r) => r.id)).toEqual([...rows].sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1)).map((r) => r.id));
        }
      } else {
        // PostgreSQL: the table of names (migration 0025-search-names) holds every existing file.
        const names = await handle.db.selectFrom('fileNames').select(['fileId as id', 'userId', 'createdAt', 'searchName']).orderBy('fileId').execute();
        const rows = await handle.db.selectFrom('files').select(['id', 'userId', 'createdAt', 'searchName']).orderBy('id').execute();
        expect(rows).toHaveLength(90);
        expect(names.map((r) => ({ ...r, createdAt: Number(r.createdAt) }))).toEqual(rows.map((r) => ({ ...r, createdAt: Number(r.createdAt) })));
      }
    } finally {
      await handle.close();
    }

    const server = await startTestServer({}, { databaseUrl, dataDir });
    try {
      const client = new Client(server.baseUrl);
      const mine = files.filter((f) => f.userId === owners[0] && (f.name!.toLowerCase().includes('beach') || (f.ocrText ?? '').includes('beach')));
      const listed = await client.get('/api/files?search=BEACH&limit=100&sortBy=oldest', { token });
      expect(listed.status, listed.text).toBe(200);
      expect(listed.body.pagination.total).toBe(mine.length);
      expect(listed.body.data.map((f: { id: string }) => f.id)).toEqual([...mine].sort((a, b) => a.createdAt! - b.createdAt! || (a.id! < b.id! ? -1 : 1)).map((f) => f.id));
      const years = (await client.get('/api/files/timeline?search=beach&groupBy=year', { token })).body.data;
      const perYear = new Map<string, number>();
      for (const f of mine) perYear.set(String(new Date(f.createdAt!).getUTCFullYear()), (perYear.get(String(new Date(f.createdAt!).getUTCFullYear())) ?? 0) + 1);
      expect(years.total).toBe(mine.length);
      expect(years.buckets.map((b: { key: string; count: number }) => [b.key, b.count])).toEqual([...perYear].sort((a, b) => (a[0] < b[0] ? 1 : -1)));
    } finally {
      await server.close();
    }
  });
});

// Migration 0021-search-sort-keys: on SQLite the sort keys of every match are read from an index by
// document number, and the numbers stay unique through an index of their own.
describe('migration 0021-search-sort-keys', () => {
  it('keeps document numbers unique and reads the sort keys of a search without the table', async () => {
    const databaseUrl = await freshDatabaseUrl();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-sort-keys-'));
    const handle = openDatabase({ databaseUrl: databaseUrl ?? null, dataDir });
    try {
      await migrate(handle.db);
      if (handle.dialect === 'postgres') {
        // PostgreSQL has no document numbers: nothing is added there.
        const { rows } = await sql<{ indexname: string }>`select indexname from pg_indexes where tablename = 'files' and indexname like 'files_docid%'`.execute(handle.db);
        expect(rows).toEqual([]);
        return;
      }
      const now = Date.now();
      await handle.db
        .insertInto('users')
        .values({ id: 'keysowner', email: 'keysowner@example.test', name: 'keys', passwordHash: 'x', urlId: 'keysownerurl', emailVerified: 1, quotaBytes: null, uploadToken: null, uploadTokenHash: null, defaultProfileId: null, uploadDefaults: null, createdAt: now, updatedAt: now })
        .execute();
      await handle.db.insertInto('files').values([fileRow('keysowner', 'keysfile1'), fileRow('keysowner', 'keysfile2')]).execute();
      const first = await handle.db.selectFrom('files').select('docId').where('id', '=', 'keysfile1').executeTakeFirstOrThrow();
      await expect(handle.db.updateTable('files').set({ docId: first.docId }).where('id', '=', 'keysfile2').execute()).rejects.toThrow(/UNIQUE constraint failed/);
      // The shape of the listing's read of a search's matches (src/listing/file-query.ts, 'matches').
      const { rows } = await sql<{ detail: string }>`explain query plan select files.id from files
        where +files.userId = 'keysowner' and files.docId in (select rowid from filesSearch where filesSearch match '"keys"')
        order by files.size desc, files.id desc limit 24`.execute(handle.db);
      expect(rows.map((r) => r.detail)).toContain('SEARCH files USING COVERING INDEX files_docId_sortKeys (docId=?)');
      // With another filter, each match is tested in the same index, not in the table (migration
      // 0027-search-filter-keys): the listing's own query, as it reads a search that drives.
      for (const filter of ['visibility=private', 'visibility=public', 'visibility=hasPassword', 'types=image/png', 'folder=unfiled']) {
        const { filters } = parseListQuery({ ...Object.fromEntries(new URLSearchParams(filter)), search: 'keys' });
        const query = orderedBy(filteredFiles(handle.db, 'sqlite', 'keysowner', filters, 'search').select('files.id'), 'largest').limit(24).compile();
        const plan = await handle.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]));
        expect(plan.rows.map((r) => r.detail), filter).toContain('SEARCH files USING COVERING INDEX files_docId_sortKeys (docId=?)');
      }
    } finally {
      await handle.close();
    }
  });
});

// Migration 0051-ocr-scan-index: SQLite's index of the recognised text goes (the trigram index serves
// every term of three characters or more); one- and two-letter searches read the text from the rows,
// and find exactly what they found before.
describe('migration 0051-ocr-scan-index', () => {
  it('drops the index of the recognised text on SQLite, and short searches still find files by their text', async () => {
    const databaseUrl = await freshDatabaseUrl();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-ocr-scan-'));
    const handle = openDatabase({ databaseUrl: databaseUrl ?? null, dataDir });
    const owners = ['scanowner1', 'scanowner2'];
    const base = Date.UTC(2024, 0, 1);
    const files = Array.from({ length: 40 }, (_, i) =>
      fileRow(owners[i % 2]!, `scanfile${String(i).padStart(3, '0')}`, {
        name: i % 4 === 0 ? `Ät-${i}.png` : `plain-${i}.png`,
        mimeType: 'image/png',
        ocrText: i % 3 === 0 ? `Receipt ZÜ ${i}` : i % 3 === 1 ? 'nothing to see' : null,
        createdAt: base + i * 86_400_000,
      }),
    );
    const indexes = async () =>
      handle.dialect === 'sqlite' ? (await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'files'`.execute(handle.db)).rows.map((r) => r.name) : [];
    let token = '';
    try {
      await migrate(handle.db, '0050-completion-claims');
      if (handle.dialect === 'sqlite') expect(await indexes()).toContain('files_userId_searchOcr_id');
      await insertAccountsAndFiles(handle, dataDir, owners, files);
      expect(await migrate(handle.db)).toEqual(['0051-ocr-scan-index', '0052-tag-combinations', '0053-batched-file-changes', '0054-linear-tag-changes', '0055-tag-folder-index']);
      expect(await indexes()).not.toContain('files_userId_searchOcr_id');
      if (handle.dialect === 'sqlite') {
        // The text is read from the rows in upload order (the upload-order index), not through the
        // (account, name) index, whose order sends each row's read anywhere in the table.
        const { filters } = parseListQuery({ search: 'zu' });
        const query = orderedBy(filteredFiles(handle.db, 'sqlite', owners[0]!, filters, 'walk').select('files.id'), 'newest').limit(24).compile();
        const plan = await handle.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]));
        expect(plan.rows.map((r) => r.detail)).toContain('SEARCH files USING INDEX files_userId_createdAt_listing (userId=? AND createdAt>?)');
      }
      token = (await createToken(handle.db, handle.dialect, owners[0]!, { name: 'reader', scopes: ['files:read'] })).secret;
    } finally {
      await handle.close();
    }

    const server = await startTestServer({}, { databaseUrl, dataDir });
    try {
      const client = new Client(server.baseUrl);
      const fold = (text: string | null | undefined) => foldForSearch(text ?? '');
      // Terms of one and two letters, in the name, in the text or in both, and one in neither.
      for (const term of ['zu', 'Z', 'at', 'to', 'qx']) {
        const mine = files.filter((f) => f.userId === owners[0] && (fold(f.name).includes(fold(term)) || fold(f.ocrText).includes(fold(term))));
        const listed = await client.get(`/api/files?search=${encodeURIComponent(term)}&limit=100&sortBy=oldest`, { token });
        expect(listed.status, listed.text).toBe(200);
        expect([term, listed.body.pagination.total]).toEqual([term, mine.length]);
        expect(listed.body.data.map((f: { id: string }) => f.id)).toEqual(mine.map((f) => f.id));
        const timeline = await client.get(`/api/files/timeline?search=${encodeURIComponent(term)}&groupBy=year`, { token });
        expect([term, timeline.body.data.total]).toEqual([term, mine.length]);
      }
      // The terms that find files by their text alone do find some.
      expect(files.some((f) => f.userId === owners[0] && !fold(f.name).includes('zu') && fold(f.ocrText).includes('zu'))).toBe(true);
    } finally {
      await server.close();
    }
  });
});
