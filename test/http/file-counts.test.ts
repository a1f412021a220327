import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CompiledQuery, sql } from 'kysely';
import { fileRow } from '../support/file-rows.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabaseUrl, startTestServer, type TestServer } from '../support/server.ts';
import { openDatabase } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrator.ts';
import { signUp, type Client } from '../support/client.ts';
import { uploadFile } from '../support/uploads.ts';
import { foldForSearch } from '../../src/shared/search-text.ts';
import { seededRandom } from '../support/random.ts';
import { bucketOf } from '../../src/listing/calendar.ts';
import { filteredFiles, tagDrives } from '../../src/listing/file-query.ts';
import { parseListQuery } from '../../src/listing/parameters.ts';

// The counts per filter value (migration 0018-file-counts), and search totals, pages and timelines
// (the trigram index, migrations 0016 and 0020), against the plain queries they stand for, after
// random sequences of every kind of change made through the product's routes: uploads, deletes,
// renames, visibility, passwords, folders (moved into, out of, deleted), tags (put on, taken off,
// deleted), types, text recognised later, and expiry actions run by the job queue.

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ UPLOAD_RATE_LIMIT: '0' });
  // The first account administers the instance and opens registration for the others.
  const admin = await signUp(server.baseUrl);
  await admin.patch('/api/settings', { registration: 'open' });
});
afterAll(() => server.close());

type Counts = Record<string, number>;


/** The counts the database keeps for an account, as `dimension/value` → files. */
async function kept(userId: string): Promise<Counts> {
  const rows = await server.ctx.db.selectFrom('fileCounts').select(['dimension', 'value', 'files']).where('userId', '=', userId).execute();
  // The files marked as tagged (migration 0031-tagged-files), as one entry.
  const marked = await server.ctx.db.selectFrom('files').select('id').where('userId', '=', userId).where('tagged', '=', 1).execute();
  const combinations = await server.ctx.db.selectFrom('fileCombinations').select(['mimeType', 'visibility', 'password', 'folderId', 'tagged', 'files']).where('userId', '=', userId).execute();
  const tagCombinations = await server.ctx.db.selectFrom('tagCombinations').select(['tagId', 'mimeType', 'visibility', 'password', 'folderId', 'files']).where('userId', '=', userId).execute();
  return Object.fromEntries([
    ...rows.map((r) => [`${r.dimension}/${r.value}`, Number(r.files)]),
    ...combinations.map((r) => [`combination/${r.mimeType}|${r.visibility}|${Number(r.password)}|${r.folderId}|${Number(r.tagged)}`, Number(r.files)]),
    ...tagCombinations.map((r) => [`tagCombination/${r.tagId}|${r.mimeType}|${r.visibility}|${Number(r.password)}|${r.folderId}`, Number(r.files)]),
    [`marked/${marked.map((r) => r.id).sort().join(' ')}`, 1],
  ]);
}

/**
 * Every file of the account's listing carries exactly the tags that count by the plain rows (not
 * excluded, by name, then ID). The listing looks up only files the database marks as tagged
 * (migration 0031-tagged-files), so a mark out of step would drop a file's tags.
 */
async function listedTagsAgree(client: Client & { userId: string }, what: string): Promise<void> {
  const response = await client.get('/api/files?limit=100');
  expect(response.status, what).toBe(200);
  expect(response.body.pagination.total, what).toBeLessThanOrEqual(100);
  const rows = await server.ctx.db
    .selectFrom('fileTags')
    .innerJoin('tags', 'tags.id', 'fileTags.tagId')
    .innerJoin('files', 'files.id', 'fileTags.fileId')
    .select(['fileTags.fileId', 'tags.id', 'tags.name'])
    .where('files.userId', '=', client.userId)
    .where('fileTags.excluded', '=', 0)
    .execute();
  const plain = new Map<string, Array<{ id: string; name: string }>>();
  for (const row of rows.sort((a, b) => (a.name === b.name ? (a.id < b.id ? -1 : 1) : a.name < b.name ? -1 : 1))) {
    const tags = plain.get(row.fileId) ?? [];
    tags.push({ id: row.id, name: row.name });
    plain.set(row.fileId, tags);
  }
  const files = response.body.data as Array<{ id: string; tags: unknown }>;
  expect(files.length, what).toBeGreaterThan(0);
  for (const file of files) expect(file.tags, `${what}: ${file.id}`).toEqual(plain.get(file.id) ?? []);
}

/** The same counts by the plain queries: the slow reference. */
async function counted(userId: string): Promise<Counts> {
  const db = server.ctx.db;
  const files = await db.selectFrom('files').select(['id', 'mimeType', 'folderId', 'visibility', 'passwordHash']).where('userId', '=', userId).execute();
  const tagged = await db
    .selectFrom('fileTags')
    .innerJoin('files', 'files.id', 'fileTags.fileId')
    .select(['fileTags.tagId', 'fileTags.fileId', 'files.mimeType', 'files.visibility', 'files.passwordHash', 'files.folderId'])
    .where('files.userId', '=', userId)
    .where('fileTags.excluded', '=', 0)
    .execute();
  const taggedFiles = new Set(tagged.map((t) => t.fileId));
  const out: Counts = {};
  const add = (key: string) => (out[key] = (out[key] ?? 0) + 1);
  for (const f of files) {
    add(`type/${f.mimeType}`);
    add(`folder/${f.folderId ?? ''}`);
    if (f.visibility === 'PUBLIC' && f.passwordHash === null) add('visibility/public');
    if (f.visibility === 'PRIVATE') add('visibility/private');
    if (f.passwordHash !== null) add('visibility/hasPassword');
    add(`combination/${f.mimeType}|${f.visibility}|${f.passwordHash === null ? 0 : 1}|${f.folderId ?? ''}|${taggedFiles.has(f.id) ? 1 : 0}`);
  }
  for (const t of tagged) {
    add(`tag/${t.tagId}`);
    add(`tagCombination/${t.tagId}|${t.mimeType}|${t.visibility}|${t.passwordHash === null ? 0 : 1}|${t.folderId ?? ''}`);
  }
  for (let i = taggedFiles.size; i > 0; i--) add('tagged/');
  add(`marked/${[...taggedFiles].sort().join(' ')}`);
  return out;
}

function random(seed: number) {
  const next = seededRandom(seed);
  return { next, pick: <T,>(items: T[]): T => items[Math.floor(next() * items.length)]!, chance: (p: number) => next() < p };
}

const types = ['text/plain', 'image/png', 'application/pdf', 'application/json'];
const ocrWords = ['invoice', 'total', 'Straße', 'renamed', 'meeting'];

/** A row as the reference sorts it. */
type Sortable = { id: string; createdAt: number | string; size: number | string; searchName?: string | null };
const byId = (a: Sortable, b: Sortable) => (a.id < b.id ? -1 : 1);
/**
 * The API's sort orders as the reference sorts plain rows: the key, then the ID in the same
 * direction; names by their folded text in code-point order, as both databases compare it.
 */
const orders: Record<'newest' | 'oldest' | 'name' | 'largest' | 'smallest', (a: Sortable, b: Sortable) => number> = {
  newest: (a, b) => Number(b.createdAt) - Number(a.createdAt) || byId(b, a),
  oldest: (a, b) => Number(a.createdAt) - Number(b.createdAt) || byId(a, b),
  name: (a, b) => Buffer.compare(Buffer.from(a.searchName ?? ''), Buffer.from(b.searchName ?? '')) || byId(a, b),
  largest: (a, b) => Number(b.size) - Number(a.size) || byId(b, a),
  smallest: (a, b) => Number(a.size) - Number(b.size) || byId(a, b),
};

/** Every page of a listing (7 files a page) and its total, through HTTP, against the reference's sorted rows. */
async function pagesAgree(owner: Client, query: string, sortBy: keyof typeof orders, selected: Array<{ id: string }>, what: string) {
  // Every page up to the first short one, as a client pages: the pages after the first are asked
  // for at once, as the total says how many there are.
  const page = async (number: number) => {
    const response = await owner.get(`/api/files?${query}&sortBy=${sortBy}&limit=7&page=${number}`);
    expect(response.status, response.text).toBe(200);
    expect(response.body.pagination.total, what).toBe(selected.length);
    return response.body.data.map((f: { id: string }) => f.id) as string[];
  };
  const first = await page(1);
  const rest = await Promise.all(Array.from({ length: Math.floor(selected.length / 7) }, (_, i) => page(i + 2)));
  const listed = [first, ...rest];
  expect(listed.slice(0, -1).every((ids) => ids.length === 7) && listed.at(-1)!.length < 7, what).toBe(true);
  expect(listed.flat(), what).toEqual(selected.map((r) => r.id));
}

/** Runs the checks `limit` at a time: they only read, and a comparison's requests overlap their waits. */
async function checkAll(checks: Array<() => Promise<void>>, limit = 6): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, checks.length) }, async () => {
      while (next < checks.length) await checks[next++]!();
    }),
  );
}

/**
 * Search totals, every page of the results and the timeline of a search, through HTTP, against the
 * slow reference: the account's rows read plainly and filtered, sorted and counted here.
 */
// A term in the characters of SQLite's facets (migration 0034-search-facets): an image's, and a
// private file's. It must match names and text only, never the facets a file's filters are indexed by.
const FACET_TERMS = [String.fromCodePoint(0xe014, 0xf0000, 0xf0000), String.fromCodePoint(0xe012, 0xf0000, 0xf0001)];

async function searchesAgree(owner: Client & { userId: string }, label: string, terms = ['file-', 'renamed', 'invoice', 'STRASSE', 'ed-1 from the middle', 'zz', ...FACET_TERMS], folders: string[] = [], tags: string[] = []) {
  const files = await server.ctx.db.selectFrom('files').select(['id', 'searchName', 'searchOcr', 'createdAt', 'size', 'folderId', 'mimeType', 'visibility', 'passwordHash']).where('userId', '=', owner.userId).execute();
  const tagRows = await server.ctx.db.selectFrom('fileTags').select(['fileId', 'tagId']).where('excluded', '=', 0).where('fileId', 'in', files.length ? files.map((f) => f.id) : ['']).execute();
  const rows = files.map((f) => ({ ...f, tags: new Set(tagRows.filter((t) => t.fileId === f.id).map((t) => t.tagId)) }));
  const middle = [...rows].sort((a, b) => a.createdAt - b.createdAt)[Math.floor(rows.length / 2)]?.createdAt ?? Date.now();
  // A term ending in " from the middle" also has a date filter: the later half of the account's uploads.
  const checks: Array<() => Promise<void>> = [];
  for (const [term, from] of terms.map((t) => (t.endsWith(' from the middle') ? ([t.slice(0, -16), middle] as const) : ([t, null] as const)))) {
    const folded = foldForSearch(term);
    const matching = rows.filter((r) => (r.searchName ?? '').includes(folded) || (r.searchOcr ?? '').includes(folded)).filter((r) => from === null || r.createdAt >= from);
    const params = `search=${encodeURIComponent(term)}${from === null ? '' : `&dateFrom=${encodeURIComponent(new Date(from).toISOString())}`}`;
    for (const sortBy of ['newest', 'name', 'largest'] as const) {
      const selected = [...matching].sort(orders[sortBy]);
      const what = `${label}, search ${term}${from === null ? '' : ' from the middle'}, ${sortBy}`;
      checks.push(() => pagesAgree(owner, params, sortBy, selected, what));
    }
    // With another filter: the search's matches or the filter's own index drive the query, whichever
    // selects fewer files (searchDrives in src/listing/file-query.ts); both must give the same files.
    if (from === null) {
      const others: Array<[string, (r: (typeof rows)[number]) => boolean]> = [
        ['folder=unfiled', (r) => r.folderId === null],
        ['types=image/png', (r) => r.mimeType === 'image/png'],
        ['visibility=private', (r) => r.visibility === 'PRIVATE'],
        // Two filters, counted together (migration 0028-filter-combinations).
        ['types=image/png,text/plain&visibility=private', (r) => (r.mimeType === 'image/png' || r.mimeType === 'text/plain') && r.visibility === 'PRIVATE'],
        ['folder=unfiled&types=application/pdf', (r) => r.folderId === null && r.mimeType === 'application/pdf'],
        // Every kind of facet of SQLite's index (migration 0034-search-facets).
        ['visibility=public,hasPassword', (r) => (r.visibility === 'PUBLIC' && r.passwordHash === null) || r.passwordHash !== null],
        ['tag=untagged', (r) => r.tags.size === 0],
        ['tag=untagged&types=image/png,text/plain&visibility=public', (r) => r.tags.size === 0 && ['image/png', 'text/plain'].includes(r.mimeType) && r.visibility === 'PUBLIC' && r.passwordHash === null],
        ...folders.slice(0, 1).map((folder): [string, (r: (typeof rows)[number]) => boolean] => [`folder=${folder}`, (r) => r.folderId === folder]),
        ...tags.slice(0, 2).map((tag): [string, (r: (typeof rows)[number]) => boolean] => [`tag=${tag}&visibility=private`, (r) => r.tags.has(tag) && r.visibility === 'PRIVATE']),
      ];
      for (const [filter, keep] of others) {
        for (const sortBy of ['newest', 'name'] as const) {
          const selected = matching.filter(keep).sort(orders[sortBy]);
          const what = `${label}, search ${term} and ${filter}, ${sortBy}`;
          checks.push(() => pagesAgree(owner, `${params}&${filter}`, sortBy, selected, what));
        }
        // Its timeline: each bucket counts exactly the selected files uploaded in it.
        const selected = matching.filter(keep);
        const what = `${label}, timeline of search ${term} and ${filter}`;
        checks.push(async () => {
          const timeline = await owner.get(`/api/files/timeline?${params}&${filter}&groupBy=week&timezone=Asia/Kathmandu`);
          expect(timeline.status, timeline.text).toBe(200);
          expect(timeline.body.data.total, what).toBe(selected.length);
          for (const bucket of timeline.body.data.buckets as Array<{ from: string; to: string; count: number }>) {
            const [start, end] = [Date.parse(bucket.from), Date.parse(bucket.to)];
            expect(bucket.count, `${what}, ${bucket.from}`).toBe(selected.filter((r) => r.createdAt >= start && r.createdAt < end).length);
          }
        });
      }
    }
    const what = `${label}, search ${term}${from === null ? '' : ' from the middle'}`;
    checks.push(async () => {
      const timeline = (await owner.get(`/api/files/timeline?${params}&groupBy=week&timezone=Asia/Kathmandu`)).body.data;
      expect(timeline.total, what).toBe(matching.length);
      expect(timeline.buckets.reduce((sum: number, b: { count: number }) => sum + b.count, 0), what).toBe(matching.length);
    });
  }
  await checkAll(checks);
}

/**
 * Listings with several of `types`, `visibility`, `folder` and `tag=untagged` (counted per
 * combination, migrations 0028-filter-combinations and 0032-untagged-combinations), with overlapping
 * visibility values, and a tag with the others (migration 0052-tag-combinations): every page and the
 * total, through HTTP, against the slow reference.
 */
async function filtersAgree(owner: Client & { userId: string }, label: string, folders: string[], tags: string[]) {
  const files = await server.ctx.db.selectFrom('files').select(['id', 'searchName', 'createdAt', 'size', 'folderId', 'mimeType', 'visibility', 'passwordHash']).where('userId', '=', owner.userId).execute();
  const tagRows = await server.ctx.db.selectFrom('fileTags').select(['fileId', 'tagId']).where('excluded', '=', 0).where('fileId', 'in', files.length ? files.map((f) => f.id) : ['']).execute();
  const rows = files.map((f) => ({ ...f, tags: new Set(tagRows.filter((t) => t.fileId === f.id).map((t) => t.tagId)) })).map((f) => ({ ...f, untagged: f.tags.size === 0 }));
  type Row = (typeof rows)[number];
  const folder = folders[0];
  // A tag with other filters, counted per tag and combination (migration 0052-tag-combinations).
  const withTags = tags.slice(0, 2).flatMap((tag): Array<[string, (r: Row) => boolean]> => [
    [`tag=${tag}&visibility=public`, (r) => r.tags.has(tag) && r.visibility === 'PUBLIC' && r.passwordHash === null],
    [`tag=${tag}&visibility=private,hasPassword`, (r) => r.tags.has(tag) && (r.visibility === 'PRIVATE' || r.passwordHash !== null)],
    [`tag=${tag}&types=image/png,text/plain`, (r) => r.tags.has(tag) && ['image/png', 'text/plain'].includes(r.mimeType)],
    [`tag=${tag}&folder=unfiled`, (r) => r.tags.has(tag) && r.folderId === null],
    ...(folder ? [[`tag=${tag}&folder=${folder}&types=image/png,application/json&visibility=private`, (r: Row) => r.tags.has(tag) && r.folderId === folder && ['image/png', 'application/json'].includes(r.mimeType) && r.visibility === 'PRIVATE'] as [string, (r: Row) => boolean]] : []),
  ]);
  const filters: Array<[string, (r: Row) => boolean]> = [
    ['types=image/png&visibility=private', (r) => r.mimeType === 'image/png' && r.visibility === 'PRIVATE'],
    ['types=text/plain,application/pdf&visibility=public,hasPassword', (r) => ['text/plain', 'application/pdf'].includes(r.mimeType) && ((r.visibility === 'PUBLIC' && r.passwordHash === null) || r.passwordHash !== null)],
    ['visibility=private,hasPassword', (r) => r.visibility === 'PRIVATE' || r.passwordHash !== null],
    ['folder=unfiled&visibility=private,hasPassword', (r) => r.folderId === null && (r.visibility === 'PRIVATE' || r.passwordHash !== null)],
    ['folder=unfiled&types=image/png&visibility=public', (r) => r.folderId === null && r.mimeType === 'image/png' && r.visibility === 'PUBLIC' && r.passwordHash === null],
    ...(folder ? [[`folder=${folder}&types=image/png,application/json`, (r: Row) => r.folderId === folder && ['image/png', 'application/json'].includes(r.mimeType)] as [string, (r: Row) => boolean]] : []),
    ['tag=untagged&types=image/png,text/plain', (r) => r.untagged && ['image/png', 'text/plain'].includes(r.mimeType)],
    ['tag=untagged&visibility=private,hasPassword', (r) => r.untagged && (r.visibility === 'PRIVATE' || r.passwordHash !== null)],
    ['tag=untagged&folder=unfiled&visibility=public', (r) => r.untagged && r.folderId === null && r.visibility === 'PUBLIC' && r.passwordHash === null],
    ...withTags,
  ];
  await checkAll(
    filters.flatMap(([filter, keep]) =>
      (['newest', 'name'] as const).map((sortBy) => () => pagesAgree(owner, filter, sortBy, rows.filter(keep).sort(orders[sortBy]), `${label}, ${filter}, ${sortBy}`)),
    ),
  );
}

async function runSequence(seed: number, steps: number, owner: Client & { userId: string }) {
  const r = random(seed);
  const files: string[] = [];
  const folders: string[] = [];
  const tags: string[] = [];
  let n = 0;
  const idOf = (response: { body: any }) => (response.body.data.downloadUrl as string).split('/').at(-2)!;
  for (let step = 0; step < steps; step++) {
    const action = r.next();
    if (action < 0.3 || files.length === 0) {
      // Some uploads carry tags, a visibility or a password (each tag row written with its file's
      // columns by the upload, migration 0052-tag-combinations).
      const fields: Record<string, string> = {};
      if (tags.length && r.chance(0.3)) fields.tagIds = JSON.stringify(tags.filter(() => r.chance(0.5)));
      if (r.chance(0.3)) fields.visibility = r.chance(0.5) ? 'PUBLIC' : 'PRIVATE';
      if (r.chance(0.15)) fields.password = 'an upload password';
      const response = await uploadFile(owner, `file-${seed}-${++n}.bin`, `contents ${n}`, { type: r.pick(types), fields });
      expect(response.status, response.text).toBe(200);
      files.push(idOf(response));
    } else if (action < 0.38) {
      const response = await owner.post('/api/folders', { name: `folder ${seed}-${++n}` });
      expect(response.status, response.text).toBe(201);
      folders.push(response.body.data.folder.id);
    } else if (action < 0.44) {
      const response = await owner.post('/api/tags', { name: `tag ${seed}-${++n}` });
      expect(response.status, response.text).toBe(201);
      tags.push(response.body.data.tag.id);
    } else if (action < 0.75) {
      const id = r.pick(files);
      const change: Record<string, unknown> = {};
      if (r.chance(0.4)) change.visibility = r.chance(0.5) ? 'PUBLIC' : 'PRIVATE';
      if (r.chance(0.3)) change.password = r.chance(0.5) ? 'a file password' : null;
      if (r.chance(0.4)) change.folderId = folders.length && r.chance(0.7) ? r.pick(folders) : null;
      if (r.chance(0.4)) change.tagIds = tags.filter(() => r.chance(0.4));
      if (r.chance(0.2)) change.name = `renamed-${seed}-${++n}.txt`;
      if (Object.keys(change).length === 0) change.visibility = 'PRIVATE';
      const response = await owner.patch(`/api/files/${id}`, change);
      expect(response.status, response.text).toBe(200);
    } else if (action < 0.83) {
      const id = files.splice(Math.floor(r.next() * files.length), 1)[0]!;
      expect((await owner.delete(`/api/files/${id}`)).status).toBe(204);
    } else if (action < 0.87 && folders.length) {
      const id = folders.splice(Math.floor(r.next() * folders.length), 1)[0]!;
      const response = await owner.delete(`/api/folders/${id}`);
      expect(response.status, response.text).toBeLessThan(300);
    } else if (action < 0.91 && tags.length) {
      const id = tags.splice(Math.floor(r.next() * tags.length), 1)[0]!;
      const response = await owner.delete(`/api/tags/${id}`);
      expect(response.status, response.text).toBeLessThan(300);
    } else if (action < 0.95) {
      // Text recognised later, written as the text job writes it (src/media/media-jobs.ts).
      const id = r.pick(files);
      const text = Array.from({ length: 4 }, () => r.pick(ocrWords)).join(' ');
      await server.ctx.db.updateTable('files').set({ ocrStatus: 'done', ocrText: text, searchOcr: foldForSearch(text) }).where('id', '=', id).execute();
    } else {
      // An expiry action, run by the job queue: the file becomes private, or goes.
      const id = r.pick(files);
      const action = r.chance(0.5) ? 'SET_PRIVATE' : 'DELETE';
      const response = await owner.patch(`/api/files/${id}`, { expiresAt: new Date(Date.now() + 1000).toISOString(), expiryAction: action });
      expect(response.status, response.text).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 1100));
      await server.jobs.runDueJobs();
      if (action === 'DELETE') files.splice(files.indexOf(id), 1);
    }
    if (step % 5 === 4) expect(await kept(owner.userId), `seed ${seed}, step ${step}`).toEqual(await counted(owner.userId));
    if (step % 10 === 9) {
      await searchesAgree(owner, `seed ${seed}, step ${step}`, undefined, folders, tags);
      await filtersAgree(owner, `seed ${seed}, step ${step}`, folders, tags);
    }
  }
  expect(await kept(owner.userId)).toEqual(await counted(owner.userId));
  await searchesAgree(owner, `seed ${seed}, at the end`, undefined, folders, tags);
  await filtersAgree(owner, `seed ${seed}, at the end`, folders, tags);
}

describe('a search alone', () => {
  // PostgreSQL counts and buckets it from the table of names (migration 0025-search-names: names
  // beginning with the term, names containing it further on, recognised text), SQLite from its
  // trigram index; the table and the index follow every write to the files, whoever makes it.
  it('answers more searches at once than the database pool has connections', async () => {
    // Each search's statements run in one transaction on one connection: a search that held its
    // connection while waiting for a second one would, with every connection so held, wait forever.
    const owner = await signUp(server.baseUrl);
    const base = Date.UTC(2024, 0, 1);
    const rows = Array.from({ length: 3000 }, (_, i) => fileRow(owner.userId, `manyatonce${owner.userId.slice(0, 8)}${i}`, { name: i % 2 ? `holiday-${i}.png` : `my holiday ${i}.png`, createdAt: base + i * 60_000 }));
    for (let i = 0; i < rows.length; i += 500) await server.ctx.db.insertInto('files').values(rows.slice(i, i + 500)).execute();
    const answers = await Promise.all(
      // Distinct requests, so that the listing cache answers none of them from another.
      Array.from({ length: 100 }, (_, i) => owner.get(`/api/files?limit=${1 + (i % 25)}&search=holiday&sortBy=${['newest', 'name', 'largest', 'oldest'][i % 4]}`)),
    );
    for (const response of answers) {
      expect(response.status, response.text).toBe(200);
      expect(response.body.pagination.total).toBe(3000);
    }
  });

  // This test and the next make several hundred requests one after another (searchesAgree): 8–11 s
  // on a quiet machine, past the default 30 s on a busy one.
  it('finds exactly the plain answer through every change made to the files directly', { timeout: 120_000 }, async () => {
    const owner = await signUp(server.baseUrl);
    const other = await signUp(server.baseUrl);
    const db = server.ctx.db;
    const base = Date.UTC(2024, 0, 1);
    // Around the range of names beginning with 'holiday': 'holidaz' just past it, an emoji and the
    // last code point right after the term inside it.
    const names = ['holiday-1.png', 'Holiday-holiday.png', 'my holiday.png', 'xholiday', 'holida.png', 'HOLIDAY', 'notes.txt', 'scan.png', 'a_holiday', 'holiday_2', 'holidaz.png', 'holiday\u{1F600}.png', 'holiday\u{10FFFF}'];
    const id = (i: number) => `namestable${owner.userId.slice(0, 8)}${i}`;
    const rows = names.map((name, i) =>
      fileRow(owner.userId, id(i), { name, size: 100 + ((i * 7) % 10), createdAt: base + i * 9 * 86_400_000, ...(name === 'scan.png' ? { mimeType: 'image/png', ocrText: 'Holiday pictures' } : {}) }),
    );
    // One statement for all, with another account's file among them.
    await db.insertInto('files').values([...rows, fileRow(other.userId, `namestable${other.userId.slice(0, 8)}x`, { name: 'holiday-theirs.png', createdAt: base })]).execute();
    const terms = ['holiday', 'HOLIDAY from the middle', 'oliday', 'olida', 'y_2', 'notes', 'pictures', 'nothing'];
    const agree = async (what: string) => {
      await searchesAgree(owner, what, terms);
      if (server.ctx.dialect === 'postgres') {
        // The table holds exactly the files' rows.
        const fromFiles = await db.selectFrom('files').select(['id', 'userId', 'createdAt', 'searchName']).where('userId', 'in', [owner.userId, other.userId]).orderBy('id').execute();
        const fromNames = await db.selectFrom('fileNames').select(['fileId as id', 'userId', 'createdAt', 'searchName']).where('userId', 'in', [owner.userId, other.userId]).orderBy('fileId').execute();
        expect(fromNames.map((r) => ({ ...r, createdAt: Number(r.createdAt) })), what).toEqual(fromFiles.map((r) => ({ ...r, createdAt: Number(r.createdAt) })));
      }
    };
    await agree('after one batch');
    // Renamed, by the API and by hand.
    expect((await owner.patch(`/api/files/${id(6)}`, { name: 'Holiday notes.txt' })).status).toBe(200);
    await db.updateTable('files').set({ name: 'ordinary.png', searchName: foldForSearch('ordinary.png') }).where('id', '=', id(0)).execute();
    await agree('after renames');
    // Text recognised later; upload times changed by hand.
    await db.updateTable('files').set({ ocrText: 'holiday', searchOcr: 'holiday', ocrStatus: 'done' }).where('id', 'in', [id(1), id(7)]).execute();
    await db.updateTable('files').set({ createdAt: base - 86_400_000 }).where('id', 'in', [id(2), id(5)]).execute();
    await agree('after text and upload times changed');
    // Deleted, through the API and in one statement by hand.
    expect((await owner.delete(`/api/files/${id(3)}`)).status).toBe(204);
    await db.deleteFrom('files').where('id', 'in', [id(4), id(8)]).execute();
    await agree('after deletes');
  });

  it('with other filters, finds exactly the plain answer through every change of type, visibility, password, folder and tags', { timeout: 120_000 }, async () => {
    // On SQLite the trigram index holds each file's filter values (migration 0034-search-facets), so
    // every change of them must index the file again, whichever way it is made.
    const owner = await signUp(server.baseUrl);
    const db = server.ctx.db;
    const base = Date.UTC(2024, 3, 1);
    const folders = [(await owner.post('/api/folders', { name: 'trips' })).body.data.folder.id as string, (await owner.post('/api/folders', { name: 'work' })).body.data.folder.id as string];
    const tags = [(await owner.post('/api/tags', { name: 'beach' })).body.data.tag.id as string, (await owner.post('/api/tags', { name: 'family' })).body.data.tag.id as string];
    const id = (i: number) => `facets${owner.userId.slice(0, 10)}${i}`;
    const kinds = ['image/png', 'text/plain', 'image/png', 'application/pdf'];
    await db
      .insertInto('files')
      .values(Array.from({ length: 12 }, (_, i) => fileRow(owner.userId, id(i), { name: i % 3 === 2 ? `notes-${i}.txt` : `holiday-${i}.png`, mimeType: kinds[i % 4], createdAt: base + i * 86_400_000 })))
      .execute();
    const terms = ['holiday', 'notes', 'iday-1'];
    const live = { folders: [...folders], tags: [...tags] };
    const agree = async (what: string) => {
      await searchesAgree(owner, what, terms, live.folders, live.tags);
      await listedTagsAgree(owner, what);
    };
    await agree('as inserted');
    // Through the API: folders, tags, visibility and passwords.
    for (const [i, change] of [
      [0, { folderId: folders[0], tagIds: [tags[0]] }],
      [1, { folderId: folders[0], tagIds: [tags[0], tags[1]], visibility: 'PRIVATE' }],
      [4, { password: 'a file password' }],
      [5, { visibility: 'PRIVATE', password: 'a file password', tagIds: [tags[1]] }],
      [8, { folderId: folders[1], tagIds: [tags[0]] }],
    ] as const) {
      const response = await owner.patch(`/api/files/${id(i)}`, change);
      expect(response.status, response.text).toBe(200);
    }
    await agree('after changes through the API');
    // Tags taken off (their rows kept, excluded), a password removed, a file moved out of its folder.
    expect((await owner.patch(`/api/files/${id(1)}`, { tagIds: [] })).status).toBe(200);
    expect((await owner.patch(`/api/files/${id(4)}`, { password: null, visibility: 'PRIVATE' })).status).toBe(200);
    expect((await owner.patch(`/api/files/${id(0)}`, { folderId: null })).status).toBe(200);
    await agree('after tags, a password and a folder taken away');
    // By hand: a type changed, tag rows deleted and added, one file's rows all at once.
    await db.updateTable('files').set({ mimeType: 'text/plain' }).where('id', '=', id(2)).execute();
    await db.deleteFrom('fileTags').where('fileId', '=', id(5)).execute();
    await db.insertInto('fileTags').values({ fileId: id(9), tagId: tags[1]!, excluded: 0 }).execute();
    await db.updateTable('files').set({ visibility: 'PRIVATE', folderId: folders[1]!, mimeType: 'image/png' }).where('id', '=', id(10)).execute();
    await agree('after changes by hand');
    // A tag deleted (its files' rows go), a folder deleted (its files become unfiled), a tagged file deleted.
    expect((await owner.delete(`/api/tags/${tags[0]}`)).status).toBeLessThan(300);
    expect((await owner.delete(`/api/folders/${folders[1]}`)).status).toBeLessThan(300);
    expect((await owner.delete(`/api/files/${id(9)}`)).status).toBe(204);
    live.tags = [tags[1]!];
    live.folders = [folders[0]!];
    await agree('after a tag, a folder and a tagged file deleted');
  });
});

describe('counts per filter value', () => {
  // 140 changes with a full comparison of searches every ten, and a second's wait for each expiry:
  // 12–24 s beside another test file on two cores, and once past the default 30 s.
  it('equal the plain counts after random sequences of every kind of change, per account', { timeout: 120_000 }, async () => {
    const first = await signUp(server.baseUrl);
    const second = await signUp(server.baseUrl);
    await runSequence(1, 60, first);
    await runSequence(2, 40, second);
    await runSequence(3, 40, first);
    // No row is left at zero, and each account has only its own.
    const rows = await server.ctx.db.selectFrom('fileCounts').select(['userId', 'files']).where('userId', 'in', [first.userId, second.userId]).execute();
    expect(rows.every((r) => Number(r.files) > 0)).toBe(true);
  });

  it('count the tagged files through every change of tags made to the database directly', async () => {
    // The triggers of migration 0023-tagged-count, whoever writes: batches naming one file several
    // times, exclusions, a deleted tag or file taking its tags along, and rows moved to another
    // file or tag.
    const owner = await signUp(server.baseUrl);
    const other = await signUp(server.baseUrl);
    const db = server.ctx.db;
    const tag = async (client: Client, name: string) => (await client.post('/api/tags', { name })).body.data.tag.id as string;
    const [a, b, c] = [await tag(owner, 'a'), await tag(owner, 'b'), await tag(owner, 'c')];
    const theirs = await tag(other, 'theirs');
    const files = Array.from({ length: 12 }, (_, i) => fileRow(owner.userId, `taggedcountA${owner.userId}${i}`));
    const theirFiles = Array.from({ length: 3 }, (_, i) => fileRow(other.userId, `taggedcountB${other.userId}${i}`));
    await db.insertInto('files').values([...files, ...theirFiles]).execute();
    const id = (i: number) => files[i]!.id;
    const agree = async (what: string) => {
      for (const client of [owner, other]) await listedTagsAgree(client, what);
      for (const userId of [owner.userId, other.userId]) expect(await kept(userId), what).toEqual(await counted(userId));
      // Each row carries its file's upload time (migration 0030-tag-upload-times).
      const times = await db.selectFrom('fileTags').innerJoin('files', 'files.id', 'fileTags.fileId').select(['fileTags.createdAt as tagged', 'files.createdAt as uploaded']).where('files.userId', 'in', [owner.userId, other.userId]).execute();
      expect(times.length, what).toBeGreaterThan(0);
      for (const row of times) expect(Number(row.tagged), what).toBe(Number(row.uploaded));
      // And its file's type, visibility, password and folder (migration 0052-tag-combinations).
      const facets = await db
        .selectFrom('fileTags')
        .innerJoin('files', 'files.id', 'fileTags.fileId')
        .select(['fileTags.mimeType', 'fileTags.visibility', 'fileTags.password', 'fileTags.folderId', 'files.mimeType as fileType', 'files.visibility as fileVisibility', 'files.passwordHash', 'files.folderId as fileFolder'])
        .where('files.userId', 'in', [owner.userId, other.userId])
        .execute();
      for (const row of facets) {
        expect([row.mimeType, row.visibility, Number(row.password), row.folderId], what).toEqual([row.fileType, row.fileVisibility, row.passwordHash === null ? 0 : 1, row.fileFolder ?? '']);
      }
    };
    await db
      .insertInto('fileTags')
      .values([
        { fileId: id(0), tagId: a, excluded: 0 },
        { fileId: id(0), tagId: b, excluded: 0 },
        { fileId: id(1), tagId: a, excluded: 1 },
        { fileId: id(2), tagId: a, excluded: 1 },
        { fileId: id(2), tagId: b, excluded: 0 },
        ...[3, 4, 5, 6, 7].map((i) => ({ fileId: id(i), tagId: c, excluded: 0 })),
        ...theirFiles.map((f) => ({ fileId: f.id, tagId: theirs, excluded: 0 })),
      ])
      .execute();
    await agree('after one batch');
    await db.updateTable('fileTags').set({ excluded: 0 }).where('fileId', '=', id(1)).execute();
    await db.updateTable('fileTags').set({ excluded: 1 }).where('fileId', 'in', [id(0), id(3)]).execute();
    await agree('after exclusions');
    await db.updateTable('fileTags').set({ fileId: id(8) }).where('fileId', '=', id(4)).execute();
    await db.updateTable('fileTags').set({ tagId: a }).where('fileId', '=', id(5)).execute();
    await agree('after rows moved to another file and tag');
    // Statements of several rows whose sums per file PostgreSQL counts by (migration
    // 0054-linear-tag-changes): a file's counting tag swapped for another in one statement (no
    // change), and two files exchanging rows, one losing its only counting tag as the other gains one.
    await db.insertInto('fileTags').values([{ fileId: id(11), tagId: a, excluded: 1 }, { fileId: id(11), tagId: b, excluded: 0 }, { fileId: id(10), tagId: c, excluded: 1 }]).execute();
    await db.updateTable('fileTags').set({ excluded: sql<number>`1 - excluded` }).where('fileId', '=', id(11)).execute();
    await agree("after a file's counting tag swapped for another in one statement");
    await db
      .updateTable('fileTags')
      .set({ fileId: sql<string>`case when ${sql.ref('fileId')} = ${id(11)} then ${id(10)} else ${id(11)} end` })
      .where((eb) => eb.or([eb.and([eb('fileId', '=', id(11)), eb('tagId', '=', a)]), eb.and([eb('fileId', '=', id(10)), eb('tagId', '=', c)])]))
      .execute();
    await agree('after two files exchanged rows in one statement');
    await db
      .insertInto('fileTags')
      .values([id(0), id(1), id(9)].map((fileId) => ({ fileId, tagId: c, excluded: fileId === id(9) ? 1 : 0 })))
      .execute();
    await db.deleteFrom('fileTags').where('tagId', '=', c).where('fileId', 'in', [id(0), id(1)]).execute();
    await db.deleteFrom('fileTags').where('fileId', 'in', [id(10), id(11)]).execute();
    await agree('after a tag put on files with and without tags, and taken off again');
    await db.updateTable('files').set({ createdAt: Date.UTC(2020, 1, 2) }).where('id', 'in', [id(5), id(8)]).execute();
    await agree('after upload times changed by hand');
    // A tagged file's type, visibility, password and folder, changed by hand, reach its tag rows
    // (migration 0052-tag-combinations), as does a folder's deletion through the foreign key; a row
    // moved to a file with other columns takes that file's.
    const folder = (await owner.post('/api/folders', { name: 'by hand' })).body.data.folder.id as string;
    await db.updateTable('files').set({ visibility: 'PRIVATE', passwordHash: 'x' }).where('id', 'in', [id(0), id(2), id(5)]).execute();
    await db.updateTable('files').set({ mimeType: 'image/webp', folderId: folder }).where('id', 'in', [id(2), id(6), id(8)]).execute();
    await agree('after tagged files changed by hand');
    await db.updateTable('fileTags').set({ fileId: id(10) }).where('fileId', '=', id(6)).execute();
    await db.updateTable('fileTags').set({ fileId: id(6) }).where('fileId', '=', id(7)).execute();
    await agree('after rows moved to files of other columns');
    await db.deleteFrom('folders').where('id', '=', folder).execute();
    await db.updateTable('files').set({ passwordHash: null }).where('id', '=', id(2)).execute();
    await agree('after a folder deleted and a password taken off');
    await db.insertInto('fileTags').values({ fileId: id(9), tagId: b, excluded: 0 }).execute();
    await db.insertInto('fileTags').values({ fileId: id(9), tagId: a, excluded: 0 }).execute();
    await db.deleteFrom('fileTags').where('fileId', '=', id(9)).where('tagId', '=', b).execute();
    await agree('after single rows');
    expect((await owner.delete(`/api/tags/${c}`)).status).toBe(204);
    await agree('after a tag deleted');
    await db.deleteFrom('files').where('id', 'in', [id(1), id(2), id(9)]).execute();
    await agree('after files deleted');
    await db.deleteFrom('fileTags').where('tagId', 'in', [a, b]).execute();
    await agree('after every tag taken off');
    expect(Object.keys(await kept(owner.userId)).some((key) => key.startsWith('tagged/'))).toBe(false);
  });

  it('count each tag per combination of the files uploaded with it', async () => {
    // An upload writes each tag row with its file's type, visibility, password and folder
    // (migration 0052-tag-combinations); the totals of a tag with another filter are read from them.
    const owner = await signUp(server.baseUrl);
    const tag = async (name: string) => (await owner.post('/api/tags', { name })).body.data.tag.id as string;
    const [a, b] = [await tag('a'), await tag('b')];
    const folder = (await owner.post('/api/folders', { name: 'uploads' })).body.data.folder.id as string;
    const uploads: Array<{ type: string; fields: Record<string, string>; query?: string }> = [
      { type: 'image/png', fields: { tagIds: JSON.stringify([a]), visibility: 'PRIVATE' } },
      { type: 'image/png', fields: { tagIds: JSON.stringify([a, b]), visibility: 'PUBLIC', password: 'an upload password' } },
      { type: 'text/plain', fields: { tagIds: JSON.stringify([b]), visibility: 'PRIVATE', password: 'an upload password' }, query: `folderId=${folder}` },
      { type: 'application/pdf', fields: { tagIds: JSON.stringify([a]), visibility: 'PUBLIC' }, query: `folderId=${folder}` },
      { type: 'image/png', fields: { visibility: 'PRIVATE' } },
    ];
    for (const [i, upload] of uploads.entries()) {
      const response = await uploadFile(owner, `upload-${i}.bin`, `contents ${i}`, { type: upload.type, fields: upload.fields, ...(upload.query ? { query: upload.query } : {}) });
      expect(response.status, response.text).toBe(200);
    }
    expect(await kept(owner.userId)).toEqual(await counted(owner.userId));
    const totals = {
      [`tag=${a}&visibility=private`]: 1,
      [`tag=${a}&visibility=public`]: 1,
      [`tag=${a}&visibility=hasPassword`]: 1,
      [`tag=${b}&visibility=private,hasPassword`]: 2,
      [`tag=${a}&folder=${folder}`]: 1,
      [`tag=${b}&folder=unfiled&types=image/png`]: 1,
      [`tag=${a}&types=image/png`]: 2,
      [`tag=${b}&folder=${folder}&visibility=public`]: 0,
    };
    for (const [query, total] of Object.entries(totals)) {
      const response = await owner.get(`/api/files?${query}`);
      expect(response.status, response.text).toBe(200);
      expect([query, response.body.pagination.total, response.body.data.length]).toEqual([query, total, total]);
    }
  });

  it('give the totals of single-filter listings and the list of types', async () => {
    const owner = await signUp(server.baseUrl);
    const folder = (await owner.post('/api/folders', { name: 'many' })).body.data.folder.id as string;
    const tag = (await owner.post('/api/tags', { name: 'many' })).body.data.tag.id as string;
    // More than a listing reads whole (1,000), so the totals come from the counts.
    const now = Date.now();
    const rows = Array.from({ length: 1500 }, (_, i) =>
      fileRow(owner.userId, `countsfile${String(i).padStart(6, '0')}${owner.userId.slice(0, 6)}`, {
        name: `f${i}.txt`,
        mimeType: i % 3 === 0 ? 'image/png' : 'text/plain',
        visibility: i % 4 === 0 ? 'PRIVATE' : 'PUBLIC',
        passwordHash: i % 10 === 0 ? 'x' : null,
        folderId: i % 2 === 0 ? folder : null,
        createdAt: now - i,
      }),
    );
    for (let i = 0; i < rows.length; i += 500) await server.ctx.db.insertInto('files').values(rows.slice(i, i + 500)).execute();
    await server.ctx.db
      .insertInto('fileTags')
      .values(rows.filter((_, i) => i % 5 !== 0).map((row) => ({ fileId: row.id, tagId: tag, excluded: 0 })))
      .execute();
    // A selection of up to 1,000 files is read whole for its first page; a page past its end gives
    // the total the database keeps: both must agree.
    const total = async (query: string) => {
      const [first, past] = await Promise.all([owner.get(`/api/files?limit=5&${query}`), owner.get(`/api/files?limit=5&page=1000&${query}`)]);
      expect(first.status, first.text).toBe(200);
      expect(past.status, past.text).toBe(200);
      expect(past.body.pagination.total, query).toBe(first.body.pagination.total);
      return first.body.pagination.total as number;
    };
    const plain = async (where: (q: any) => any) => Number((await where(server.ctx.db.selectFrom('files').where('userId', '=', owner.userId)).select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow()).n);
    expect(await total('types=image/png')).toBe(await plain((q) => q.where('mimeType', '=', 'image/png')));
    expect(await total('types=text/plain,image/png,text/plain')).toBe(1500);
    expect(await total('visibility=private')).toBe(await plain((q) => q.where('visibility', '=', 'PRIVATE')));
    expect(await total('visibility=public')).toBe(await plain((q) => q.where('visibility', '=', 'PUBLIC').where('passwordHash', 'is', null)));
    expect(await total('visibility=hasPassword')).toBe(await plain((q) => q.where('passwordHash', 'is not', null)));
    // Overlapping values: each file once.
    expect(await total('visibility=private,hasPassword')).toBe(await plain((q) => q.where((eb: any) => eb.or([eb('visibility', '=', 'PRIVATE'), eb('passwordHash', 'is not', null)]))));
    // Several filters, and overlapping visibility values: from the counts per combination
    // (migration 0028-filter-combinations).
    const privateOrPassword = (eb: any) => eb.or([eb('visibility', '=', 'PRIVATE'), eb('passwordHash', 'is not', null)]);
    expect(await total('types=image/png&visibility=private')).toBe(await plain((q) => q.where('mimeType', '=', 'image/png').where('visibility', '=', 'PRIVATE')));
    expect(await total(`folder=${folder}&visibility=public`)).toBe(await plain((q) => q.where('folderId', '=', folder).where('visibility', '=', 'PUBLIC').where('passwordHash', 'is', null)));
    expect(await total(`folder=unfiled&types=text/plain&visibility=private,hasPassword`)).toBe(await plain((q) => q.where('folderId', 'is', null).where('mimeType', '=', 'text/plain').where(privateOrPassword)));
    expect(await total(`folder=${folder}&types=image/gif`)).toBe(0);
    expect(await total(`folder=${folder}&visibility=private,hasPassword`)).toBe(await plain((q) => q.where('folderId', '=', folder).where(privateOrPassword)));
    expect(await total(`folder=${folder}`)).toBe(750);
    expect(await total("folder=unfiled")).toBe(750);
    expect(await total(`tag=${tag}`)).toBe(1200);
    // Untagged with other filters: the counts per combination, with the files' tagged mark
    // (migration 0032-untagged-combinations).
    const untaggedRows = (q: any) => q.where((eb: any) => eb.not(eb.exists(eb.selectFrom('fileTags').select('fileId').whereRef('fileTags.fileId', '=', 'files.id').where('excluded', '=', 0))));
    expect(await total('tag=untagged&types=image/png')).toBe(await plain((q) => untaggedRows(q).where('mimeType', '=', 'image/png')));
    expect(await total(`tag=untagged&folder=${folder}&visibility=private,hasPassword`)).toBe(await plain((q) => untaggedRows(q).where('folderId', '=', folder).where(privateOrPassword)));
    expect(await total('tag=untagged&visibility=public')).toBe(await plain((q) => untaggedRows(q).where('visibility', '=', 'PUBLIC').where('passwordHash', 'is', null)));
    // Untagged: the account's files less the tagged ones (migration 0023-tagged-count); its pages
    // walk the sort's order (SQLite) or anti-join (PostgreSQL), and agree with the plain query.
    expect(await total('tag=untagged')).toBe(300);
    const untagged = rows.filter((_, i) => i % 5 === 0);
    for (const sortBy of ['newest', 'name'] as const) {
      const sorted = [...untagged].sort(orders[sortBy]).map((row) => row.id);
      for (const page of [1, 2, 6, 7]) {
        const response = await owner.get(`/api/files?tag=untagged&sortBy=${sortBy}&limit=50&page=${page}`);
        expect(response.status, response.text).toBe(200);
        expect(response.body.data.map((f: { id: string }) => f.id), `${sortBy} page ${page}`).toEqual(sorted.slice((page - 1) * 50, page * 50));
        expect(response.body.pagination.total).toBe(300);
      }
    }
    await server.ctx.db.deleteFrom('fileTags').where('tagId', '=', tag).execute();
    expect(await total('tag=untagged')).toBe(1500);
    expect((await owner.get('/api/files/types')).body.data.types).toEqual(['image/png', 'text/plain']);
  });
});

describe('a tag with another filter, read whole', () => {
  // SQLite reads a small selection whole through the tag's list, narrowed by the tag rows' copy of
  // their files' columns (migration 0052-tag-combinations), when the tag holds no more files than
  // the other filters select (tagDrives); otherwise through the other filter's index, as before.
  // PostgreSQL always gets the narrowed list, and plans with its statistics.
  it('is read through the smaller of the tag and the other filter, with the same files either way', async () => {
    const owner = await signUp(server.baseUrl);
    const db = server.ctx.db;
    const tag = async (name: string) => (await owner.post('/api/tags', { name })).body.data.tag.id as string;
    const [few, all] = [await tag('few'), await tag('all')];
    const rows = Array.from({ length: 60 }, (_, i) =>
      fileRow(owner.userId, `tagdrives${owner.userId.slice(0, 6)}${String(i).padStart(3, '0')}`, {
        mimeType: i < 3 ? 'image/gif' : 'text/plain',
        visibility: i % 2 ? 'PRIVATE' : 'PUBLIC',
        createdAt: Date.UTC(2024, 0, 1) + i * 60_000,
      }),
    );
    await db.insertInto('files').values(rows).execute();
    await db.insertInto('fileTags').values([...rows.map((row) => ({ fileId: row.id, tagId: all })), ...rows.filter((_, i) => i % 6 === 1).map((row) => ({ fileId: row.id, tagId: few }))]).execute();
    const sqlite = server.ctx.dialect === 'sqlite';
    const cases = [
      // 10 files against the 30 private unfiled ones: the tag drives.
      { query: `tag=${few}&folder=unfiled&visibility=private`, drives: true, ids: rows.filter((_, i) => i % 6 === 1).map((r) => r.id) },
      // 60 files against the 3 GIFs: the type's index drives.
      { query: `tag=${all}&types=image/gif`, drives: !sqlite, ids: rows.slice(0, 3).map((r) => r.id) },
    ];
    for (const { query, drives, ids } of cases) {
      const { filters } = parseListQuery(Object.fromEntries(new URLSearchParams(query)));
      expect(await tagDrives(db, server.ctx.dialect, owner.userId, filters), query).toBe(drives);
      const response = await owner.get(`/api/files?${query}&sortBy=oldest`);
      expect(response.status, response.text).toBe(200);
      expect(response.body.data.map((f: { id: string }) => f.id), query).toEqual(ids);
      expect(response.body.pagination.total, query).toBe(ids.length);
      if (drives && sqlite) {
        // The files are read by ID from the tag's narrowed list, not by walking the unfiled ones.
        const compiled = filteredFiles(db, 'sqlite', owner.userId, filters, 'tag').select('files.id').compile();
        const plan = await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${compiled.sql}`, [...compiled.parameters]));
        expect(plan.rows.map((r) => r.detail), query).toContain('SEARCH files USING INDEX sqlite_autoindex_files_1 (id=?)');
      }
    }
  });
});

describe('a tag with a folder', () => {
  // More files than are read whole: by upload time, the page is a range of the tag rows' (tag,
  // excluded, folder, upload time) index (migration 0055-tag-folder-index), and so is the count with
  // dates; in another order, deep pages read the tag's files in the folder by ID, near the start a
  // walk of the order (list-files.ts).
  it('lists and counts exactly the files the plain query selects, in every order, near the start, deep and with dates', async () => {
    const owner = await signUp(server.baseUrl);
    const db = server.ctx.db;
    const tag = (await owner.post('/api/tags', { name: 'kept' })).body.data.tag.id as string;
    const other = (await owner.post('/api/tags', { name: 'other' })).body.data.tag.id as string;
    const folder = (await owner.post('/api/folders', { name: 'inbox' })).body.data.folder.id as string;
    const start = Date.UTC(2024, 0, 1);
    const rows = Array.from({ length: 2400 }, (_, i) =>
      fileRow(owner.userId, `tagfolder${owner.userId.slice(0, 6)}${String((i * 7919) % 2400).padStart(4, '0')}`, {
        name: `n${(i * 31) % 997}-${i}.txt`,
        size: (i * 37) % 500,
        // Pairs of files share an upload time: the ID breaks the tie, as in every listing.
        createdAt: start + Math.floor(i / 2) * 60_000,
        folderId: i % 5 === 4 ? null : folder,
      }),
    );
    for (let i = 0; i < rows.length; i += 500) await db.insertInto('files').values(rows.slice(i, i + 500)).execute();
    // The tag on three files in four, one of them excluded in every 50; the other tag elsewhere.
    const tagRows = rows.flatMap((row, i) => (i % 4 === 3 ? [{ fileId: row.id, tagId: other, excluded: 0 }] : [{ fileId: row.id, tagId: tag, excluded: i % 50 === 0 ? 1 : 0 }]));
    for (let i = 0; i < tagRows.length; i += 500) await db.insertInto('fileTags').values(tagRows.slice(i, i + 500)).execute();
    const tagged = new Set(rows.filter((_, i) => i % 4 !== 3 && i % 50 !== 0).map((row) => row.id));
    const inFolder = rows.filter((row) => tagged.has(row.id) && row.folderId === folder);
    const unfiled = rows.filter((row) => tagged.has(row.id) && row.folderId === null);
    expect(inFolder.length).toBeGreaterThan(1000);

    const listed = async (query: string, sortBy: string, page: number) => {
      const response = await owner.get(`/api/files?${query}&sortBy=${sortBy}&limit=24&page=${page}`);
      expect(response.status, response.text).toBe(200);
      return { ids: response.body.data.map((f: { id: string }) => f.id) as string[], total: response.body.pagination.total as number };
    };
    const agree = async (query: string, selected: typeof rows, what: string) => {
      for (const sortBy of ['newest', 'oldest', 'name', 'largest'] as const) {
        const sorted = [...selected].sort(orders[sortBy]).map((row) => row.id);
        const last = Math.ceil(sorted.length / 24);
        for (const page of [1, 2, Math.ceil(last / 2), last, last + 1]) {
          const { ids, total } = await listed(query, sortBy, page);
          expect(total, `${what}, ${sortBy}, page ${page}`).toBe(sorted.length);
          expect(ids, `${what}, ${sortBy}, page ${page}`).toEqual(sorted.slice((page - 1) * 24, page * 24));
        }
      }
    };
    await agree(`tag=${tag}&folder=${folder}`, inFolder, 'in the folder');
    await agree(`folder=unfiled&tag=${tag}`, unfiled, 'unfiled');
    const [from, until] = [start + 200 * 60_000, start + 700 * 60_000];
    await agree(
      `tag=${tag}&folder=${folder}&dateFrom=${new Date(from).toISOString()}&dateTo=${new Date(until).toISOString()}`,
      inFolder.filter((row) => Number(row.createdAt) >= from && Number(row.createdAt) <= until),
      'in the folder, between two dates',
    );
    // A file moved out of the folder leaves the tag's range at once (its tag rows' copy, migration
    // 0052-tag-combinations).
    await db.updateTable('files').set({ folderId: null }).where('id', '=', inFolder[0]!.id).execute();
    expect((await listed(`tag=${tag}&folder=${folder}`, 'oldest', 1)).ids).toEqual([...inFolder.slice(1)].sort(orders.oldest).slice(0, 24).map((row) => row.id));
  });
});

describe('untagged files', () => {
  // More files than a page walks (WALK_BUDGET, src/listing/list-files.ts): on SQLite the first pages
  // walk the sort's order and look each file's tags up; deeper ones read the tagged files' list.
  it('are counted and paged exactly, in several orders, near the start and deep', async () => {
    const owner = await signUp(server.baseUrl);
    const [kept1, kept2] = await Promise.all(['one', 'two'].map(async (name) => (await owner.post('/api/tags', { name })).body.data.tag.id as string));
    const r = random(31);
    const start = Date.UTC(2024, 0, 1);
    const rows = Array.from({ length: 6000 }, (_, i) =>
      fileRow(owner.userId, `untagged${owner.userId.slice(0, 6)}${String(i).padStart(5, '0')}`, {
        name: `${r.pick(['Scan', 'photo', 'Ärger'])}-${i}.txt`,
        mimeType: r.chance(0.5) ? 'image/png' : 'text/plain',
        size: Math.floor(r.next() * 1_000_000),
        createdAt: start + Math.floor(i / 2) * 60_000,
      }),
    );
    for (let i = 0; i < rows.length; i += 500) await server.ctx.db.insertInto('files').values(rows.slice(i, i + 500)).execute();
    // A third tagged, some twice; a tag excluded by a profile leaves its file untagged.
    const tagRows = rows.flatMap((row, i) =>
      i % 3 === 0 ? [{ fileId: row.id, tagId: kept1!, excluded: i % 9 === 0 ? 1 : 0 }, ...(i % 6 === 0 ? [{ fileId: row.id, tagId: kept2!, excluded: i % 18 === 0 ? 1 : 0 }] : [])] : [],
    );
    for (let i = 0; i < tagRows.length; i += 500) await server.ctx.db.insertInto('fileTags').values(tagRows.slice(i, i + 500)).execute();
    const counting = new Set(tagRows.filter((t) => t.excluded === 0).map((t) => t.fileId));
    const untagged = rows.filter((row) => !counting.has(row.id));
    for (const sortBy of ['newest', 'name', 'largest'] as const) {
      const sorted = [...untagged].sort(orders[sortBy]).map((row) => row.id);
      const pageCount = Math.ceil(sorted.length / 60);
      for (const page of [1, 2, 10, Math.floor(pageCount / 2), pageCount, pageCount + 1]) {
        const what = `${sortBy}, page ${page}`;
        const response = await owner.get(`/api/files?tag=untagged&sortBy=${sortBy}&limit=60&page=${page}`);
        expect(response.status, response.text).toBe(200);
        expect(response.body.pagination.total, what).toBe(untagged.length);
        expect(response.body.data.map((f: { id: string }) => f.id), what).toEqual(sorted.slice((page - 1) * 60, page * 60));
      }
    }
    // With a type: counted per combination (migration 0032-untagged-combinations), paged by the
    // same walks.
    const images = untagged.filter((row) => row.mimeType === 'image/png');
    for (const sortBy of ['newest', 'name'] as const) {
      const sorted = [...images].sort(orders[sortBy]).map((row) => row.id);
      const pageCount = Math.ceil(sorted.length / 60);
      for (const page of [1, 2, 10, pageCount, pageCount + 1]) {
        const what = `image/png, ${sortBy}, page ${page}`;
        const response = await owner.get(`/api/files?tag=untagged&types=image/png&sortBy=${sortBy}&limit=60&page=${page}`);
        expect(response.status, response.text).toBe(200);
        expect(response.body.pagination.total, what).toBe(images.length);
        expect(response.body.data.map((f: { id: string }) => f.id), what).toEqual(sorted.slice((page - 1) * 60, page * 60));
      }
    }
    const timeline = (await owner.get('/api/files/timeline?tag=untagged&groupBy=month')).body.data;
    expect(timeline.total).toBe(untagged.length);
  });
});

describe('the gallery of many images', () => {
  // More images than a selection read whole (SMALL_SELECTION, src/listing/list-files.ts): their
  // number comes from the counts per type, the anchor's position from a count.
  it('steps both ways from any image, with the exact total and position', async () => {
    const owner = await signUp(server.baseUrl);
    const r = random(37);
    const types = ['image/png', 'image/jpeg', 'image/webp', 'text/plain', 'application/pdf'];
    const rows = Array.from({ length: 3000 }, (_, i) =>
      fileRow(owner.userId, `gallery${owner.userId.slice(0, 6)}${String(i).padStart(5, '0')}`, {
        name: `${r.pick(['Scan', 'photo', 'Öl'])}-${i}.${i % 7}`,
        mimeType: r.pick(types),
        size: Math.floor(r.next() * 1000),
        createdAt: Date.UTC(2024, 0, 1) + Math.floor(i / 2) * 60_000,
      }),
    );
    for (let i = 0; i < rows.length; i += 500) await server.ctx.db.insertInto('files').values(rows.slice(i, i + 500)).execute();
    // A tag on most of them: the images of a tag are counted per tag and combination (migration
    // 0052-tag-combinations).
    const tag = (await owner.post('/api/tags', { name: 'most' })).body.data.tag.id as string;
    const tagged = new Set(rows.filter(() => r.chance(0.8)).map((row) => row.id));
    for (let i = 0; i < rows.length; i += 500) {
      const batch = rows.slice(i, i + 500).filter((row) => tagged.has(row.id));
      if (batch.length) await server.ctx.db.insertInto('fileTags').values(batch.map((row) => ({ fileId: row.id, tagId: tag }))).execute();
    }
    for (const [filter, keep] of [
      ['', (row: (typeof rows)[number]) => row.mimeType!.startsWith('image/')],
      ['&types=image/png,image/jpeg,text/plain', (row: (typeof rows)[number]) => row.mimeType === 'image/png' || row.mimeType === 'image/jpeg'],
      [`&tag=${tag}`, (row: (typeof rows)[number]) => row.mimeType!.startsWith('image/') && tagged.has(row.id)],
    ] as const) {
      for (const sortBy of ['newest', 'name', 'smallest'] as const) {
        const images = rows.filter((row) => keep(row)).sort(orders[sortBy]).map((row) => row.id);
        expect(images.length).toBeGreaterThan(1000);
        for (const at of [0, 5, Math.floor(images.length / 2), images.length - 3, images.length - 1]) {
          for (const [direction, from, to] of [['next', at + 1, at + 21], ['previous', Math.max(0, at - 20), at]] as const) {
            const what = `${filter} ${sortBy} ${direction} from ${at}`;
            const response = await owner.get(`/api/files?sortBy=${sortBy}&limit=20&galleryAnchor=${images[at]}&galleryDirection=${direction}${filter}`);
            expect(response.status, response.text).toBe(200);
            expect(response.body.data.map((f: { id: string }) => f.id), what).toEqual(images.slice(from, to));
            expect(response.body.pagination.total, what).toBe(images.length);
            expect(response.body.pagination.offset, what).toBe(Math.min(from, images.length));
          }
        }
      }
    }
    // A file that is not an image, or no image at all among the types asked for: not an anchor.
    const text = rows.find((row) => row.mimeType === 'text/plain')!.id;
    expect((await owner.get(`/api/files?galleryAnchor=${text}&galleryDirection=next`)).status).toBe(404);
    const image = rows.find((row) => row.mimeType === 'image/png')!.id;
    expect((await owner.get(`/api/files?galleryAnchor=${image}&galleryDirection=next&types=text/plain`)).status).toBe(404);
  });
});

describe('migrations 0018-file-counts, 0023-tagged-count, 0028-filter-combinations, 0030-tag-upload-times, 0031-tagged-files, 0032-untagged-combinations, 0034-search-facets and 0052-tag-combinations', () => {
  it('counts the files that exist when it runs', async () => {
    const databaseUrl = await freshDatabaseUrl();
    const handle = openDatabase({ databaseUrl: databaseUrl ?? null, dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-counts-')) });
    try {
      await migrate(handle.db, '0016-search-index');
      const db = handle.db;
      const now = Date.now();
      await db
        .insertInto('users')
        .values({ id: 'countsowner', email: 'counts@example.test', name: 'Counts', passwordHash: 'x', urlId: 'countsurl', emailVerified: 1, quotaBytes: null, uploadToken: null, uploadTokenHash: null, defaultProfileId: null, uploadDefaults: null, createdAt: now, updatedAt: now })
        .execute();
      await db.insertInto('folders').values({ id: 'countsfolder', userId: 'countsowner', name: 'F', parentId: null, createdAt: now, updatedAt: now }).execute();
      await db.insertInto('tags').values([{ id: 'countstag1', userId: 'countsowner', name: 'a', createdAt: now }, { id: 'countstag2', userId: 'countsowner', name: 'b', createdAt: now }]).execute();
      const files = Array.from({ length: 40 }, (_, i) =>
        fileRow('countsowner', `countsfile${i}`, {
          mimeType: ['text/plain', 'image/png', 'image/jpeg'][i % 3]!,
          visibility: i % 2 ? 'PUBLIC' : 'PRIVATE',
          passwordHash: i % 5 === 0 ? 'x' : null,
          folderId: i % 4 === 0 ? 'countsfolder' : null,
          createdAt: now - i * 1000,
        }),
      );
      await db.insertInto('files').values(files).execute();
      await db.insertInto('fileTags').values(files.flatMap((f, i) => [{ fileId: f.id, tagId: 'countstag1', excluded: i % 3 === 0 ? 1 : 0 }, ...(i % 2 ? [{ fileId: f.id, tagId: 'countstag2', excluded: 0 }] : [])])).execute();
      await migrate(db);
      const rows = await db.selectFrom('fileCounts').select(['dimension', 'value', 'files']).where('userId', '=', 'countsowner').execute();
      const kept = Object.fromEntries(rows.map((r) => [`${r.dimension}/${r.value}`, Number(r.files)]));
      expect(kept).toEqual({
        'type/text/plain': 14,
        'type/image/png': 13,
        'type/image/jpeg': 13,
        'folder/countsfolder': 10,
        'folder/': 30,
        'visibility/public': 16,
        'visibility/private': 20,
        'visibility/hasPassword': 8,
        'tag/countstag1': 26,
        'tag/countstag2': 20,
        // Files with a tag that counts (migration 0023-tagged-count): all but the even multiples of 3.
        'tagged/': 33,
      });
      // Each file in its one combination, with its tagged mark (migration 0032-untagged-combinations:
      // a tag that counts on every odd file and on those not a multiple of 3); each tag row with its
      // file's upload time.
      const combinations = await db.selectFrom('fileCombinations').select(['mimeType', 'visibility', 'password', 'folderId', 'tagged', 'files']).where('userId', '=', 'countsowner').execute();
      const expected: Record<string, number> = {};
      files.forEach((f, i) => {
        const key = `${f.mimeType}|${f.visibility}|${f.passwordHash ? 1 : 0}|${f.folderId ?? ''}|${i % 2 === 1 || i % 3 !== 0 ? 1 : 0}`;
        expected[key] = (expected[key] ?? 0) + 1;
      });
      expect(Object.fromEntries(combinations.map((r) => [`${r.mimeType}|${r.visibility}|${r.password}|${r.folderId}|${r.tagged}`, Number(r.files)]))).toEqual(expected);
      // Each tag that counts, per combination of its files (migration 0052-tag-combinations): the
      // first tag on the files not a multiple of 3, the second on the odd ones.
      const tagCombinations = await db.selectFrom('tagCombinations').select(['tagId', 'mimeType', 'visibility', 'password', 'folderId', 'files']).where('userId', '=', 'countsowner').execute();
      const expectedTags: Record<string, number> = {};
      files.forEach((f, i) => {
        for (const tag of [...(i % 3 !== 0 ? ['countstag1'] : []), ...(i % 2 === 1 ? ['countstag2'] : [])]) {
          const key = `${tag}|${f.mimeType}|${f.visibility}|${f.passwordHash ? 1 : 0}|${f.folderId ?? ''}`;
          expectedTags[key] = (expectedTags[key] ?? 0) + 1;
        }
      });
      expect(Object.keys(expectedTags).length).toBeGreaterThan(10);
      expect(Object.fromEntries(tagCombinations.map((r) => [`${r.tagId}|${r.mimeType}|${r.visibility}|${r.password}|${r.folderId}`, Number(r.files)]))).toEqual(expectedTags);
      const times = await db.selectFrom('fileTags').select(['fileId', 'createdAt']).where('fileId', 'like', 'countsfile%').execute();
      expect(times).toHaveLength(60);
      // The files with a tag that counts are marked (migration 0031-tagged-files).
      const marked = await db.selectFrom('files').select('id').where('userId', '=', 'countsowner').where('tagged', '=', 1).execute();
      expect(marked.map((r) => r.id).sort()).toEqual(files.filter((_, i) => i % 2 === 1 || i % 3 !== 0).map((f) => f.id).sort());
      for (const row of times) expect(Number(row.createdAt)).toBe(now - Number(row.fileId.slice('countsfile'.length)) * 1000);
      if (!databaseUrl) {
        // SQLite's trigram index holds the facets of every file (migration 0034-search-facets): a
        // marker and the two 12-bit digits of a value's code.
        const codes = new Map((await db.selectFrom('searchFacetValues').select(['kind', 'value', 'code']).execute()).map((r) => [`${r.kind}/${r.value}`, Number(r.code)]));
        const facet = (marker: number, code: number) => `searchFacets : "${String.fromCodePoint(marker, 0xf0000 + Math.floor(code / 4096), 0xf0000 + (code % 4096))}"`;
        const documents = async (query: string) => Number((await sql<{ n: number }>`select count(*) as n from filesSearch where filesSearch match ${query}`.execute(db)).rows[0]!.n);
        expect(await documents(facet(0xe010, codes.get('t/image/png')!))).toBe(13);
        expect(await documents(facet(0xe014, 0))).toBe(26);
        expect(await documents(facet(0xe011, codes.get('f/countsfolder')!))).toBe(10);
        expect(await documents(facet(0xe011, 0))).toBe(30);
        expect(await documents(facet(0xe012, 0))).toBe(16);
        expect(await documents(facet(0xe012, 1))).toBe(20);
        expect(await documents(facet(0xe012, 2))).toBe(8);
        expect(await documents(facet(0xe013, codes.get('g/countstag1')!))).toBe(26);
        expect(await documents(`${facet(0xe013, codes.get('g/countstag2')!)} AND ${facet(0xe010, codes.get('t/text/plain')!)}`)).toBe(files.filter((f, i) => i % 2 === 1 && f.mimeType === 'text/plain').length);
        expect(await documents(facet(0xe013, 0))).toBe(7);
        // Deleted entries are dropped by the daily merge, not in the writing transaction.
        expect((await sql<{ v: number }>`select v from filesSearch_config where k = 'deletemerge'`.execute(db)).rows).toEqual([{ v: 0 }]);
      }
    } finally {
      await handle.close();
    }
  });
});

describe('timeline from upload counts', () => {
  it('counts each bucket exactly as the files say, in every zone and grouping, also with date filters', async () => {
    const owner = await signUp(server.baseUrl);
    const r = random(11);
    // Upload times over forty years, some on the minute of a quarter-hour boundary or a UTC midnight,
    // a few before 1970 (negative times).
    const times: number[] = [];
    for (let i = 0; i < 1200; i++) {
      const base = Date.UTC(1965, 0, 1) + Math.floor(r.next() * 45 * 365 * 86_400_000);
      const kind = r.next();
      times.push(kind < 0.1 ? base - (base % 900_000) : kind < 0.15 ? base - (base % 86_400_000) : kind < 0.2 ? base - (base % 900_000) - 1 : base);
    }
    const insertAt = async (list: number[], from: number) => {
      const rows = list.map((createdAt, i) => fileRow(owner.userId, `tl${owner.userId.slice(0, 8)}${String(from + i).padStart(6, '0')}`, { createdAt }));
      for (let i = 0; i < rows.length; i += 400) await server.ctx.db.insertInto('files').values(rows.slice(i, i + 400)).execute();
      return rows.map((row) => row.id);
    };
    const ids = await insertAt(times, 0);
    // Some go again, one by one and as a batch.
    const gone = new Set<number>();
    for (let i = 0; i < 60; i++) gone.add(Math.floor(r.next() * times.length));
    const goneIds = [...gone].map((i) => ids[i]!);
    for (const id of goneIds.slice(0, 10)) expect((await owner.delete(`/api/files/${id}`)).status).toBe(204);
    await server.ctx.db.deleteFrom('files').where('id', 'in', goneIds.slice(10)).execute();
    const remaining = times.filter((_, i) => !gone.has(i));

    const check = async (params: Record<string, string>, lowest = -Infinity, highest = Infinity) => {
      const response = await owner.get(`/api/files/timeline?${new URLSearchParams({ ...params, sortBy: 'oldest' })}`);
      expect(response.status, response.text).toBe(200);
      const data = response.body.data as { total: number; snapshot: string; buckets: Array<{ from: string; to: string; count: number }> };
      const ceiling = Date.parse(data.snapshot);
      const selected = remaining.filter((t) => t >= lowest && t <= Math.min(highest, ceiling));
      for (const b of data.buckets) {
        const from = Date.parse(b.from);
        const to = Date.parse(b.to);
        expect(b.count, `${JSON.stringify(params)} ${b.from}`).toBe(selected.filter((t) => t >= from && t < to).length);
      }
      expect(data.total, JSON.stringify(params)).toBe(selected.length);
    };
    for (const timezone of ['UTC', 'Asia/Kolkata', 'Asia/Kathmandu', 'America/New_York', 'Africa/Monrovia', 'Australia/Lord_Howe']) {
      for (const groupBy of ['month', 'week', 'year']) await check({ groupBy, timezone });
    }
    const from = Date.UTC(1990, 4, 17, 13, 7, 11, 123);
    const to = Date.UTC(2003, 1, 2, 23, 59, 59, 999);
    await check({ groupBy: 'month', timezone: 'Asia/Kolkata', dateFrom: new Date(from).toISOString(), dateTo: new Date(to).toISOString() }, from, to);
    await check({ groupBy: 'week', timezone: 'UTC', dateFrom: new Date(Date.UTC(1969, 11, 31, 23, 50)).toISOString() }, Date.UTC(1969, 11, 31, 23, 50));
  });

  it('keeps the counts per quarter hour and per day equal to the files, through uploads and deletions', async () => {
    const owner = await signUp(server.baseUrl);
    for (let i = 0; i < 12; i++) expect((await uploadFile(owner, `q${i}.txt`, 'x')).status).toBe(200);
    const listing = await owner.get('/api/files?limit=100');
    for (const file of listing.body.data.slice(0, 5)) expect((await owner.delete(`/api/files/${file.id}`)).status).toBe(204);
    const slots = async () =>
      Object.fromEntries(
        (await server.ctx.db.selectFrom('uploadCounts').select(['span', 'slot', 'files']).where('userId', '=', owner.userId).execute()).map((r) => [`${r.span}/${r.slot}`, Number(r.files)]),
      );
    const expected: Record<string, number> = {};
    for (const f of await server.ctx.db.selectFrom('files').select('createdAt').where('userId', '=', owner.userId).execute()) {
      for (const [span, ms] of [[15, 900_000], [1440, 86_400_000]] as const) {
        const key = `${span}/${Math.floor(Number(f.createdAt) / ms)}`;
        expected[key] = (expected[key] ?? 0) + 1;
      }
    }
    expect(await slots()).toEqual(expected);
    expect(Object.values(expected).reduce((a, b) => a + b, 0)).toBe(14);
  });
});

describe('a search with another filter, more matches than are read whole', () => {
  // More combined matches than a search reads whole (SEARCH_SELECTION, 20,000, src/listing/list-files.ts),
  // the search matching fewer than half of what the other filter selects: on SQLite the search's
  // matches drive, and the page is walked in the sort's order with the other filters hidden from the
  // planner ('walk-search' in src/listing/file-query.ts). Totals, pages and timelines against the plain
  // answer, in three orders and with date bounds, on both databases.
  it('lists, counts and buckets exactly the files the plain query selects', async () => {
    const owner = await signUp(server.baseUrl);
    const folder = (await owner.post('/api/folders', { name: 'a few' })).body.data.folder.id as string;
    const r = random(23);
    const start = Date.UTC(2023, 0, 1);
    const rows = Array.from({ length: 110_000 }, (_, i) =>
      fileRow(owner.userId, `bigsel${owner.userId.slice(0, 6)}${String(i).padStart(6, '0')}`, {
        // 21 % of the names hold the term, some of them twice or in another case.
        name: r.chance(0.21) ? `${r.pick(['Report', 'report', 'annual-report'])}-${i}.txt` : `${r.pick(['notes', 'scan', 'photo'])}-${i}.txt`,
        mimeType: r.chance(0.99) ? 'image/png' : 'text/plain',
        size: Math.floor(r.next() * 1_000_000),
        views: Math.floor(r.next() * 50),
        folderId: r.chance(0.02) ? folder : null,
        // Some share an upload time, so the ID breaks the tie.
        createdAt: start + Math.floor(i / 3) * 1_200_000 + (i % 3 === 2 ? 1 : 0),
      }),
    );
    for (let i = 0; i < rows.length; i += 500) await server.ctx.db.insertInto('files').values(rows.slice(i, i + 500)).execute();

    const plain = await server.ctx.db.selectFrom('files').select(['id', 'searchName', 'createdAt', 'size', 'views', 'folderId', 'mimeType']).where('userId', '=', owner.userId).execute();
    type Row = (typeof plain)[number];
    const oldest = orders.oldest;
    const matching = plain.filter((row) => (row.searchName ?? '').includes('report'));
    const tenth = [...plain].sort(oldest)[11_000]!.createdAt;
    const last = [...plain].sort(oldest)[104_500]!.createdAt;
    const cases: Array<[string, (row: Row) => boolean]> = [
      ['folder=unfiled', (row) => row.folderId === null],
      ['types=image/png', (row) => row.mimeType === 'image/png'],
      [`folder=unfiled&dateFrom=${new Date(Number(tenth)).toISOString()}`, (row) => row.folderId === null && row.createdAt >= tenth],
      [`types=image/png&dateTo=${new Date(Number(last)).toISOString()}`, (row) => row.mimeType === 'image/png' && row.createdAt <= last],
    ];
    for (const [filter, keep] of cases) {
      const selected = matching.filter(keep);
      expect(selected.length, filter).toBeGreaterThan(20_000);
      for (const sortBy of ['newest', 'name', 'largest'] as const) {
        const sorted = [...selected].sort(orders[sortBy]);
        const pageCount = Math.ceil(sorted.length / 100);
        // The last pages are taken from the matches read whole, the others by walking the sort's order.
        await Promise.all(
          [1, Math.floor(pageCount / 2), Math.floor(pageCount * 0.9), pageCount, pageCount + 1].map(async (page) => {
            const what = `search=report&${filter}, ${sortBy}, page ${page}`;
            const response = await owner.get(`/api/files?search=report&${filter}&sortBy=${sortBy}&limit=100&page=${page}`);
            expect(response.status, response.text).toBe(200);
            expect(response.body.pagination.total, what).toBe(sorted.length);
            expect(response.body.data.map((f: { id: string }) => f.id), what).toEqual(sorted.slice((page - 1) * 100, page * 100).map((row) => row.id));
          }),
        );
      }
      // A page past any library still carries the total.
      const farAway = await owner.get(`/api/files?search=report&${filter}&page=99999999999999999999`);
      expect(farAway.status, farAway.text).toBe(200);
      expect(farAway.body.data, filter).toEqual([]);
      expect(farAway.body.pagination.total, filter).toBe(selected.length);
      const timeline = await owner.get(`/api/files/timeline?search=report&${filter}&groupBy=month&timezone=UTC`);
      expect(timeline.status, timeline.text).toBe(200);
      expect(timeline.body.data.total, filter).toBe(selected.length);
      for (const bucket of timeline.body.data.buckets as Array<{ from: string; to: string; count: number }>) {
        const [from, to] = [Date.parse(bucket.from), Date.parse(bucket.to)];
        expect(bucket.count, `${filter}, ${bucket.from}`).toBe(selected.filter((row) => row.createdAt >= from && row.createdAt < to).length);
      }
      // The gallery (images only) from an image in the middle, both ways.
      for (const sortBy of ['newest', 'name'] as const) {
        const images = selected.filter((row) => row.mimeType === 'image/png').sort(orders[sortBy]);
        expect(images.length, filter).toBeGreaterThan(20_000);
        const at = Math.floor(images.length / 2);
        for (const [direction, from, to] of [['next', at + 1, at + 25], ['previous', at - 24, at]] as const) {
          const what = `gallery of search=report&${filter}, ${sortBy}, ${direction}`;
          const response = await owner.get(`/api/files?search=report&${filter}&sortBy=${sortBy}&limit=24&galleryAnchor=${images[at]!.id}&galleryDirection=${direction}`);
          expect(response.status, response.text).toBe(200);
          expect(response.body.data.map((f: { id: string }) => f.id), what).toEqual(images.slice(from, to).map((row) => row.id));
          expect(response.body.pagination, what).toMatchObject({ total: images.length, offset: from });
        }
      }
      // A sort not by date: one undated bucket of them all.
      const undated = await owner.get(`/api/files/timeline?search=report&${filter}&sortBy=name`);
      expect(undated.status, undated.text).toBe(200);
      expect(undated.body.data.buckets.map((b: { key: string; count: number }) => [b.key, b.count]), filter).toEqual([['all', selected.length]]);
    }
  }, 240_000);

  // The matches of 'zeta' are the oldest files and sort last by name, so a walk from the newest file
  // or from the first name passes none of them; and few of them are images. On SQLite the search's
  // index counts either selection with its facets (migration 0034-search-facets); with dates on an
  // account whose document numbers do not follow upload order, the selection is counted over the
  // files and a page that a walk does not find is read from the whole selection.
  it('lists exactly the plain answer when the selected files cluster in the order, also once the numbers no longer follow upload order', async () => {
    const owner = await signUp(server.baseUrl);
    const folder = (await owner.post('/api/folders', { name: 'aside' })).body.data.folder.id as string;
    const r = random(29);
    const start = Date.UTC(2022, 0, 1);
    const rows = Array.from({ length: 80_000 }, (_, i) => {
      const zeta = i < 45_000;
      return fileRow(owner.userId, `cluster${owner.userId.slice(0, 6)}${String(i).padStart(6, '0')}`, {
        name: zeta ? `Zeta-${i}.txt` : `${r.pick(['alpha', 'beta'])}-${i}.png`,
        mimeType: zeta ? (r.chance(0.05) ? 'image/png' : 'text/plain') : 'image/png',
        size: Math.floor(r.next() * 1_000_000),
        folderId: r.chance(0.01) ? folder : null,
        createdAt: start + i * 600_000,
      });
    });
    for (let i = 0; i < rows.length; i += 500) await server.ctx.db.insertInto('files').values(rows.slice(i, i + 500)).execute();

    const plain = await server.ctx.db.selectFrom('files').select(['id', 'searchName', 'createdAt', 'size', 'folderId', 'mimeType']).where('userId', '=', owner.userId).execute();
    type Row = (typeof plain)[number];
    const matching = plain.filter((row) => (row.searchName ?? '').includes('zeta'));
    const cases: Array<[string, (row: Row) => boolean, (n: number) => boolean]> = [
      ['folder=unfiled', (row) => row.folderId === null, (n) => n > 40_000],
      ['types=image/png', (row) => row.mimeType === 'image/png', (n) => n > 1_000 && n < 4_000],
    ];
    const pagesAgree = async (dates: string) => {
      for (const [filter, keep, sized] of cases) {
        const selected = matching.filter(keep);
        expect(sized(selected.length), `${filter}: ${selected.length} files`).toBe(true);
        for (const sortBy of ['newest', 'oldest', 'name'] as const) {
          const sorted = [...selected].sort(orders[sortBy]);
          const pageCount = Math.ceil(sorted.length / 50);
          await Promise.all(
            [1, 2, Math.floor(pageCount / 2), pageCount, pageCount + 1].map(async (page) => {
              const what = `search=zeta&${filter}${dates}, ${sortBy}, page ${page}`;
              const response = await owner.get(`/api/files?search=zeta&${filter}${dates}&sortBy=${sortBy}&limit=50&page=${page}`);
              expect(response.status, response.text).toBe(200);
              expect(response.body.pagination.total, what).toBe(sorted.length);
              expect(response.body.data.map((f: { id: string }) => f.id), what).toEqual(sorted.slice((page - 1) * 50, page * 50).map((row) => row.id));
            }),
          );
        }
      }
    };
    await pagesAgree('');
    // Once a file's upload time changes, SQLite's document numbers no longer follow upload order, and
    // a search with dates is no longer counted by its index alone (migration 0020-search-documents):
    // the selection is counted over the files, the page found by a bounded walk or from the
    // selection read whole. The dates here select every file.
    await server.ctx.db.updateTable('files').set({ createdAt: start + 79_999 * 600_000 + 1 }).where('id', '=', rows[79_999]!.id).execute();
    if (server.ctx.dialect === 'sqlite') expect((await server.ctx.db.selectFrom('users').select('docsUnordered').where('id', '=', owner.userId).executeTakeFirstOrThrow()).docsUnordered).toBe(1);
    await pagesAgree(`&dateFrom=${new Date(start - 86_400_000).toISOString()}`);
  }, 240_000);
});

describe('the timeline of a tag or a folder', () => {
  // A tag or folder holding a small share of the account is read through its own index and bucketed
  // in the process; a larger one is counted per bucket (src/listing/timeline.ts). Both against the
  // plain answer, with the other filters, dates, zones and the undated bucket. Up to 26 s beside
  // another test file on two cores.
  it('counts each bucket exactly, whatever share of the account the tag or folder holds', { timeout: 120_000 }, async () => {
    const owner = await signUp(server.baseUrl);
    const other = await signUp(server.baseUrl);
    const r = random(23);
    const make = async (client: Client, names: string[]) =>
      Promise.all(names.map(async (name) => (await client.post('/api/tags', { name })).body.data.tag.id as string));
    const folders = async (client: Client, names: string[]) =>
      Promise.all(names.map(async (name) => (await client.post('/api/folders', { name })).body.data.folder.id as string));
    const [smallTag, largeTag] = await make(owner, ['few', 'many']);
    const [smallFolder, largeFolder] = await folders(owner, ['few', 'many']);
    const [theirTag] = await make(other, ['theirs']);
    type Seeded = { id: string; createdAt: number; mimeType: string; visibility: 'PUBLIC' | 'PRIVATE'; folderId: string | null; tags: string[] };
    const seeded: Seeded[] = [];
    const rows = [];
    const tagRows: Array<{ fileId: string; tagId: string; excluded: number }> = [];
    for (let i = 0; i < 640; i++) {
      const createdAt = Date.UTC(2019, 0, 1) + Math.floor(r.next() * 6 * 365 * 86_400_000) - (i % 97 === 0 ? 900_000 * Math.floor(r.next() * 4) : 0);
      const file: Seeded = {
        id: `tlselA${owner.userId}${String(i).padStart(5, '0')}`,
        createdAt,
        mimeType: r.chance(0.5) ? 'image/png' : 'text/plain',
        visibility: r.chance(0.3) ? 'PRIVATE' : 'PUBLIC',
        // 2 % and about 50 % of the account: below and above the share read through the own index.
        folderId: i % 50 === 7 ? smallFolder! : r.chance(0.5) ? largeFolder! : null,
        tags: [],
      };
      if (i % 20 === 3) file.tags.push(smallTag!);
      if (r.chance(0.55)) file.tags.push(largeTag!);
      // A tag taken off by a profile's exclusion does not count.
      if (r.chance(0.03)) tagRows.push({ fileId: file.id, tagId: smallTag!, excluded: file.tags.includes(smallTag!) ? 0 : 1 });
      for (const tag of file.tags) if (!tagRows.some((t) => t.fileId === file.id && t.tagId === tag)) tagRows.push({ fileId: file.id, tagId: tag, excluded: 0 });
      seeded.push(file);
      rows.push(fileRow(owner.userId, file.id, { createdAt, mimeType: file.mimeType, visibility: file.visibility, folderId: file.folderId }));
    }
    // The other account's files at the same times, tagged with its own tag.
    const theirs = seeded.slice(0, 200).map((f, i) => fileRow(other.userId, `tlselB${other.userId}${String(i).padStart(5, '0')}`, { createdAt: f.createdAt }));
    for (let i = 0; i < rows.length; i += 400) await server.ctx.db.insertInto('files').values(rows.slice(i, i + 400)).execute();
    await server.ctx.db.insertInto('files').values(theirs).execute();
    await server.ctx.db.insertInto('fileTags').values(tagRows).execute();
    await server.ctx.db.insertInto('fileTags').values(theirs.map((f) => ({ fileId: f.id, tagId: theirTag!, excluded: 0 }))).execute();
    expect(seeded.filter((f) => f.tags.includes(smallTag!)).length).toBeLessThan(640 / 12);
    expect(seeded.filter((f) => f.folderId === smallFolder).length).toBeLessThan(640 / 32);

    const from = Date.UTC(2020, 6, 3, 10, 20, 30, 400);
    const to = Date.UTC(2023, 2, 9, 5, 6, 7, 800);
    const cases: Array<[Record<string, string>, (f: Seeded) => boolean]> = [
      [{ tag: smallTag! }, (f) => f.tags.includes(smallTag!)],
      [{ tag: largeTag! }, (f) => f.tags.includes(largeTag!)],
      [{ folder: smallFolder! }, (f) => f.folderId === smallFolder],
      [{ folder: largeFolder! }, (f) => f.folderId === largeFolder],
      [{ tag: smallTag!, types: 'image/png' }, (f) => f.tags.includes(smallTag!) && f.mimeType === 'image/png'],
      [{ folder: smallFolder!, visibility: 'private' }, (f) => f.folderId === smallFolder && f.visibility === 'PRIVATE'],
      [{ tag: smallTag!, folder: largeFolder! }, (f) => f.tags.includes(smallTag!) && f.folderId === largeFolder],
      // A tag with a folder: ranges of the tag rows' (tag, excluded, folder, upload time) index (migration 0055-tag-folder-index).
      [{ tag: largeTag!, folder: smallFolder! }, (f) => f.tags.includes(largeTag!) && f.folderId === smallFolder],
      [{ tag: largeTag!, folder: 'unfiled', dateFrom: new Date(from).toISOString() }, (f) => f.tags.includes(largeTag!) && f.folderId === null && f.createdAt >= from],
      [{ tag: smallTag!, dateFrom: new Date(from).toISOString(), dateTo: new Date(to).toISOString() }, (f) => f.tags.includes(smallTag!) && f.createdAt >= from && f.createdAt <= to],
      [{ folder: smallFolder!, dateFrom: new Date(from).toISOString() }, (f) => f.folderId === smallFolder && f.createdAt >= from],
      [{ tag: largeTag!, dateTo: new Date(to).toISOString() }, (f) => f.tags.includes(largeTag!) && f.createdAt <= to],
      // The account's counts less its tagged files' (migration 0031-tagged-files).
      [{ tag: 'untagged' }, (f) => f.tags.length === 0],
      [{ tag: 'untagged', dateFrom: new Date(from).toISOString(), dateTo: new Date(to).toISOString() }, (f) => f.tags.length === 0 && f.createdAt >= from && f.createdAt <= to],
      // Several filters, each bucket one range of an index that holds the others (migration 0029-timeline-filter-indexes).
      [{ types: 'image/png', visibility: 'private' }, (f) => f.mimeType === 'image/png' && f.visibility === 'PRIVATE'],
      [{ folder: largeFolder!, visibility: 'public', types: 'text/plain' }, (f) => f.folderId === largeFolder && f.visibility === 'PUBLIC' && f.mimeType === 'text/plain'],
      // Untagged with other filters: each bucket one range of the other filter's index, which holds
      // the files' tagged mark (migration 0033-untagged-timeline-indexes).
      [{ tag: 'untagged', types: 'image/png' }, (f) => f.tags.length === 0 && f.mimeType === 'image/png'],
      [{ tag: 'untagged', visibility: 'private' }, (f) => f.tags.length === 0 && f.visibility === 'PRIVATE'],
      [{ tag: 'untagged', visibility: 'public,hasPassword' }, (f) => f.tags.length === 0 && f.visibility === 'PUBLIC'],
      [{ tag: 'untagged', folder: 'unfiled', dateFrom: new Date(from).toISOString() }, (f) => f.tags.length === 0 && f.folderId === null && f.createdAt >= from],
      [{ tag: 'untagged', folder: largeFolder!, types: 'text/plain' }, (f) => f.tags.length === 0 && f.folderId === largeFolder && f.mimeType === 'text/plain'],
    ];
    for (const [filters, selects] of cases) {
      const selected = seeded.filter(selects);
      expect(selected.length, JSON.stringify(filters)).toBeGreaterThan(0);
      for (const [groupBy, timezone] of [['month', 'UTC'], ['week', 'Asia/Kathmandu'], ['year', 'America/New_York']] as const) {
        const what = `${JSON.stringify(filters)} ${groupBy} ${timezone}`;
        const response = await owner.get(`/api/files/timeline?${new URLSearchParams({ ...filters, groupBy, timezone, sortBy: 'oldest' })}`);
        expect(response.status, response.text).toBe(200);
        const want = new Map<string, number>();
        for (const f of selected) {
          const key = bucketOf(f.createdAt, groupBy, timezone).key;
          want.set(key, (want.get(key) ?? 0) + 1);
        }
        const data = response.body.data as { total: number; buckets: Array<{ key: string; count: number }> };
        expect(data.total, what).toBe(selected.length);
        expect(data.buckets.map((b) => [b.key, b.count]), what).toEqual([...want].sort((a, b) => (a[0] < b[0] ? -1 : 1)));
      }
      // A sort not by date: one undated bucket, from the oldest selected upload.
      const undated = (await owner.get(`/api/files/timeline?${new URLSearchParams({ ...filters, sortBy: 'name' })}`)).body.data;
      expect(undated.total, JSON.stringify(filters)).toBe(selected.length);
      expect(Date.parse(undated.buckets[0].from), JSON.stringify(filters)).toBe(Math.min(...selected.map((f) => f.createdAt)));
    }
    // Another account's tag or folder is not found, and its own counts only its files.
    expect((await owner.get(`/api/files/timeline?tag=${theirTag}`)).status).toBe(404);
    expect((await other.get(`/api/files/timeline?tag=${theirTag}&groupBy=year`)).body.data.total).toBe(200);
  });

  // Over more calendar buckets than one statement counts (MAX_SQL_BUCKETS, src/listing/timeline.ts:
  // 3,000), the upload times are read in order and bucketed in the process, for every kind of
  // timeline: the account's, a tag's, the untagged files' and a filter's.
  it('buckets uploads spread over more than a century exactly', async () => {
    const owner = await signUp(server.baseUrl);
    const tag = (await owner.post('/api/tags', { name: 'old' })).body.data.tag.id as string;
    const r = random(43);
    const files = Array.from({ length: 300 }, (_, i) => ({
      id: `century${owner.userId.slice(0, 8)}${String(i).padStart(4, '0')}`,
      createdAt: Date.UTC(1890, 0, 1) + Math.floor(r.next() * 135 * 365 * 86_400_000),
      mimeType: r.chance(0.5) ? 'image/png' : 'text/plain',
      tagged: r.chance(0.4),
      voyage: r.chance(0.5),
    }));
    // In upload order, so that SQLite's document numbers follow it and its search index buckets a search.
    files.sort((a, b) => a.createdAt - b.createdAt);
    await server.ctx.db
      .insertInto('files')
      .values(files.map((f, i) => fileRow(owner.userId, f.id, { createdAt: f.createdAt, mimeType: f.mimeType, name: `${f.voyage ? 'voyage' : 'other'}-${i}.bin` })))
      .execute();
    await server.ctx.db.insertInto('fileTags').values(files.filter((f) => f.tagged).map((f) => ({ fileId: f.id, tagId: tag, excluded: 0 }))).execute();
    const cases: Array<[Record<string, string>, (f: (typeof files)[number]) => boolean]> = [
      [{}, () => true],
      [{ tag }, (f) => f.tagged],
      [{ tag: 'untagged' }, (f) => !f.tagged],
      [{ types: 'image/png' }, (f) => f.mimeType === 'image/png'],
      [{ search: 'voyage' }, (f) => f.voyage],
      [{ search: 'voyage', types: 'image/png', tag: 'untagged' }, (f) => f.voyage && f.mimeType === 'image/png' && !f.tagged],
    ];
    // By week, more buckets than one statement counts; by month (1,620), fewer.
    for (const groupBy of ['week', 'month'] as const) {
      for (const [filters, selects] of cases) {
        const what = `${JSON.stringify(filters)} by ${groupBy}`;
        const want = new Map<string, number>();
        for (const f of files.filter(selects)) {
          const key = bucketOf(f.createdAt, groupBy, 'Asia/Kathmandu').key;
          want.set(key, (want.get(key) ?? 0) + 1);
        }
        const response = await owner.get(`/api/files/timeline?${new URLSearchParams({ ...filters, groupBy, timezone: 'Asia/Kathmandu', sortBy: 'oldest' })}`);
        expect(response.status, response.text).toBe(200);
        expect(response.body.data.total, what).toBe(files.filter(selects).length);
        expect(response.body.data.buckets.map((b: { key: string; count: number }) => [b.key, b.count]), what).toEqual([...want].sort((a, b) => (a[0] < b[0] ? -1 : 1)));
      }
    }
  });
});

describe('a search sorted by name whose matches begin with the term', () => {
  // SQLite reads such a page from the run of names that begin with the term, once that run holds
  // every match (namesBeginningWith, src/listing/list-files.ts); any other match sends it back to
  // reading the matches whole. Each step below changes which of the two answers.
  it('lists exactly the matches in name order, also once a match does not begin with the term', async () => {
    const owner = await signUp(server.baseUrl);
    const r = random(47);
    const start = Date.UTC(2024, 5, 1);
    let n = 0;
    const insert = async (names: string[], ocrText: string | null = null) => {
      const rows = names.map((name) => fileRow(owner.userId, `prefixed${owner.userId.slice(0, 6)}${String(n++).padStart(5, '0')}`, { name, ocrText, size: Math.floor(r.next() * 1000), createdAt: start + n * 60_000 }));
      await server.ctx.db.insertInto('files').values(rows).execute();
    };
    // Names that begin with the term, in both cases and with the accent, among others that do not.
    await insert(Array.from({ length: 150 }, (_, i) => `${r.pick(['Ärger', 'ärger', 'ÄRGER'])}-${r.pick(['b', 'a', 'c'])}${i}.txt`));
    await insert(Array.from({ length: 150 }, (_, i) => `${r.pick(['zeta', 'Alpha', 'Beta'])}-${i}.txt`));
    const agree = async (what: string) => {
      const rows = await server.ctx.db.selectFrom('files').select(['id', 'searchName', 'searchOcr', 'createdAt', 'size']).where('userId', '=', owner.userId).execute();
      const term = foldForSearch('ärger');
      const selected = rows.filter((row) => (row.searchName ?? '').includes(term) || (row.searchOcr ?? '').includes(term)).sort(orders.name).map((row) => row.id);
      for (const page of [1, 2, 7, Math.ceil(selected.length / 24), Math.ceil(selected.length / 24) + 1]) {
        const response = await owner.get(`/api/files?search=%C3%84rger&sortBy=name&limit=24&page=${page}`);
        expect(response.status, response.text).toBe(200);
        expect(response.body.pagination.total, `${what}, page ${page}`).toBe(selected.length);
        expect(response.body.data.map((f: { id: string }) => f.id), `${what}, page ${page}`).toEqual(selected.slice((page - 1) * 24, page * 24));
      }
    };
    await agree('every match begins with the term');
    await insert(['mein ärger.txt']);
    await agree('a name with the term inside');
    await server.ctx.db.deleteFrom('files').where('name', '=', 'mein ärger.txt').where('userId', '=', owner.userId).execute();
    await agree('that name deleted');
    await insert(['scan.png'], 'Viel Ärger');
    await agree('a match by its recognised text');
    await server.ctx.db.deleteFrom('files').where('name', '=', 'scan.png').where('userId', '=', owner.userId).execute();
    // The last code point right after the term sorts past the run's bound: counted apart.
    await insert(['ärger\u{10FFFF}.txt', 'ärger\u{10FFFF}a.txt']);
    await agree('names past the bound of the run');
  });
});
