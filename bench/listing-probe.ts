/**
 * A quick measurement of the file listing on a large account (not a test):
 *
 *   node bench/listing-probe.ts [--db sqlite|postgres] [--files 100000] [--vacuum] [--cold] [--shuffled]
 *                              [--keep] [--reuse] [--only <label regex>]
 *
 * Starts a real server (SQLite in a temporary directory, or a throwaway PostgreSQL cluster made with
 * the machine's initdb, as the test suite does), seeds one account with N files directly through
 * Kysely in batches (plus a second account, so scoping is exercised), then times HTTP requests made
 * with a named files:read token: the default listing at 32 concurrent connections, searches,
 * timelines, types and filtered listings. Prints p50/p99 in milliseconds. Upload times are spread
 * over three years in insertion order; --shuffled inserts them in random order instead. --vacuum runs
 * VACUUM ANALYZE (ANALYZE on SQLite) after seeding; --cold (PostgreSQL) turns autovacuum off for the
 * seeded tables, to measure a freshly imported account without planner statistics.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql, type Insertable } from 'kysely';
import type { Database } from '../src/db/schema.ts';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { createLogger, startServer } from '../src/server.ts';
import { foldForSearch } from '../src/shared/search-text.ts';
import { randomLowerAlnum } from '../src/db/ids.ts';
import { freePort, type PostgresCluster } from '../test/support/postgres.ts';
import { startBenchPostgres } from './lib/postgres-settings.ts';
import { seededRandom } from '../test/support/random.ts';

const { values: args } = parseArgs({
  options: { db: { type: 'string', default: 'sqlite' }, files: { type: 'string', default: '100000' }, vacuum: { type: 'boolean', default: false }, keep: { type: 'boolean', default: false }, reuse: { type: 'boolean', default: false }, shuffled: { type: 'boolean', default: false }, cold: { type: 'boolean', default: false }, only: { type: 'string' } },
});
const requestedFiles = Number(args.files);


// --keep leaves the data (and the PostgreSQL cluster) in place and notes where; --reuse measures it
// again without seeding.
const stateFile = path.join(os.tmpdir(), `hoard-bench-state-${args.db}.json`);
const reused = args.reuse ? (JSON.parse(fs.readFileSync(stateFile, 'utf8')) as { dataDir: string; databaseUrl?: string; token: string; fileCount: number }) : null;
let cluster: PostgresCluster | null = null;
let databaseUrl: string | undefined = reused?.databaseUrl;
if (args.db === 'postgres' && !reused) {
  cluster = await startBenchPostgres();
  const client = new pg.Client({ connectionString: cluster.url });
  await client.connect();
  await client.query('create database hoard_bench');
  await client.end();
  databaseUrl = cluster.url.replace(/\/postgres$/, '/hoard_bench');
}
const dataDir = reused?.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-bench-'));
const port = await freePort();
const config = loadConfig({
  PORT: String(port),
  HOST: '127.0.0.1',
  BASE_URL: `http://127.0.0.1:${port}`,
  DATA_DIR: dataDir,
  LOG_LEVEL: 'silent',
  UPLOAD_RATE_LIMIT: '0',
  ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
});
const server = await startServer(config, createLogger('silent'));
const base = config.baseUrl;
const db = server.ctx.db;

async function json(method: string, url: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(base + url, { method, headers: { 'content-type': 'application/json', origin: base, ...headers }, body: body === undefined ? null : JSON.stringify(body) });
  return { status: response.status, headers: response.headers, body: (await response.json()) as any };
}

const folderIds = Array.from({ length: 10 }, (_, i) => `benchfolder${i}`);
const tagIds = Array.from({ length: 10 }, (_, i) => `benchtag${i}`);
const now = Date.now();
const token = reused ? reused.token : await prepare();
const fileCount = reused ? reused.fileCount : requestedFiles;
if (args.keep) fs.writeFileSync(stateFile, JSON.stringify({ dataDir, databaseUrl, token, fileCount }));

async function prepare(): Promise<string> {
  // The account (first account: an administrator) and its token.
  const register = await fetch(`${base}/api/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: base },
    body: JSON.stringify({ email: 'bench@example.test', password: 'correct horse battery' }),
  });
  const cookie = register.headers.getSetCookie()[0]!.split(';')[0]!;
  const userId = ((await register.json()) as any).data.user.id as string;
  const token = (await json('POST', '/api/tokens', { name: 'bench', scopes: ['files:read', 'urls:read'] }, { cookie })).body.data.secret as string;
  await json('PATCH', '/api/settings', { registration: 'open' }, { cookie });
  const otherId = ((await json('POST', '/api/auth/register', { email: 'other@example.test', password: 'correct horse battery' })).body as any).data.user.id as string;

  // Folders and tags.
  await db.insertInto('folders').values(folderIds.map((id, i) => ({ id, userId, name: `Folder ${i}`, parentId: null, createdAt: now, updatedAt: now }))).execute();
  await db.insertInto('tags').values(tagIds.map((id, i) => ({ id, userId, name: `tag ${i}`, createdAt: now }))).execute();

  const words = ['holiday', 'invoice', 'screenshot', 'report', 'Ärger', 'draft', 'scan', 'photo', 'backup', 'notes', 'résumé', 'budget', 'diagram', 'meeting', 'straße'];
  const types = ['image/png', 'image/png', 'image/jpeg', 'image/jpeg', 'image/webp', 'text/plain', 'application/pdf', 'video/mp4', 'application/zip', 'image/gif'];
  const span = 3 * 365 * 86_400_000;
  const random = seededRandom(42);

  async function seedFiles(owner: string, count: number, prefix: string) {
    const started = performance.now();
    // Empty stand-ins for the files' bytes (local storage keeps key K at DATA_DIR/files/K): a restart
    // (--reuse) is refused on a DATA_DIR that holds none of the database's files.
    fs.mkdirSync(path.join(dataDir, 'files', 'bench', owner), { recursive: true });
    for (let offset = 0; offset < count; offset += 1000) {
      const rows: Insertable<Database['files']>[] = [];
      const fileTags: Insertable<Database['fileTags']>[] = [];
      for (let i = offset; i < Math.min(count, offset + 1000); i++) {
        // Uploads arrive in time order (as in production), unless --shuffled.
        const createdAt = args.shuffled ? now - Math.floor(random() * span) : now - span + Math.floor(((i + random()) * span) / count);
        const id = createdAt.toString(36).padStart(9, '0') + randomLowerAlnum(11);
        const word = words[Math.floor(random() * words.length)]!;
        const mimeType = types[Math.floor(random() * types.length)]!;
        const name = `${word}-${prefix}${i}.${mimeType.split('/')[1]}`;
        rows.push({
          id,
          userId: owner,
          name,
          originalName: name,
          storageKey: `bench/${owner}/${id}`,
          mimeType,
          size: Math.floor(random() * 20_000_000),
          sha256: '0'.repeat(64),
          visibility: random() < 0.7 ? ('PUBLIC' as const) : ('PRIVATE' as const),
          passwordHash: random() < 0.05 ? 'x' : null,
          expiresAt: null,
          expiryAction: null,
          folderId: random() < 0.5 ? folderIds[Math.floor(random() * folderIds.length)]! : null,
          shareStyle: 'framed',
          views: Math.floor(random() * 1000),
          downloads: Math.floor(random() * 100),
          ocrText: random() < 0.1 ? `scanned text ${word} page ${i}` : null,
          searchName: foldForSearch(name),
          searchOcr: null as string | null,
          createdAt,
          updatedAt: createdAt,
        });
        const row = rows[rows.length - 1]!;
        if (row.ocrText) row.searchOcr = foldForSearch(row.ocrText);
        if (owner === userId && random() < 0.3) fileTags.push({ fileId: id, tagId: tagIds[Math.floor(random() * tagIds.length)]!, excluded: random() < 0.1 ? 1 : 0 });
      }
      await db.transaction().execute(async (trx) => {
        await trx.insertInto('files').values(rows).execute();
        if (fileTags.length) await trx.insertInto('fileTags').values(fileTags).execute();
      });
      for (const row of rows) fs.writeFileSync(path.join(dataDir, 'files', row.storageKey), '');
    }
    return performance.now() - started;
  }

  // --cold (PostgreSQL): no autovacuum, so the measurement sees freshly loaded tables without
  // planner statistics or visibility map, as right after a bulk import.
  if (args.cold && args.db === 'postgres') {
    for (const table of ['files', 'fileTags', 'users', 'tags', 'folders']) await sql`alter table ${sql.table(table)} set (autovacuum_enabled = false)`.execute(db);
  }
  const seedMs = await seedFiles(userId, requestedFiles, 'f');
  await seedFiles(otherId, Math.min(requestedFiles, 5000), 'o');
  if (args.vacuum) {
    if (args.db === 'postgres') await sql`vacuum analyze`.execute(db);
    else await sql`analyze`.execute(db);
  }
  const counted = await db.selectFrom('users').select('fileCount').where('id', '=', userId).executeTakeFirstOrThrow();
  console.log(`${args.db}: seeded ${requestedFiles} files in ${(seedMs / 1000).toFixed(1)} s (fileCount ${counted.fileCount})${args.vacuum ? ', after VACUUM/ANALYZE' : ''}`);
  return token;
}

async function timed(url: string): Promise<number> {
  const started = performance.now();
  const response = await fetch(base + url, { headers: { authorization: `Bearer ${token}` } });
  const body = await response.text();
  const elapsed = performance.now() - started;
  if (response.status !== 200) throw new Error(`${url}: ${response.status} ${body}`);
  return elapsed;
}

function summary(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return `p50 ${at(0.5).toFixed(1)}  p99 ${at(0.99).toFixed(1)}  max ${sorted[sorted.length - 1]!.toFixed(1)}  (n=${sorted.length})`;
}

const selected = (label: string) => !args.only || new RegExp(args.only).test(label);

async function sequential(label: string, url: string, runs = 30) {
  if (!selected(label)) return;
  for (let i = 0; i < 3; i++) await timed(url);
  const samples = [];
  for (let i = 0; i < runs; i++) samples.push(await timed(url));
  console.log(`${label.padEnd(44)} ${summary(samples)}`);
}

async function concurrent(label: string, url: string, connections = 32, perConnection = 40) {
  if (!selected(label)) return;
  // Warm-up (JIT, statement caches, database page cache) before measuring.
  for (let round = 0; round < 5; round++) await Promise.all(Array.from({ length: connections }, () => timed(url)));
  const samples: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      for (let i = 0; i < perConnection; i++) samples.push(await timed(url));
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  console.log(`${label.padEnd(44)} ${summary(samples)}  ${(samples.length / seconds).toFixed(0)} req/s`);
}

const q = (params: Record<string, string>) => `?${new URLSearchParams(params)}`;
if (process.env.BENCH_BASELINE) await concurrent('baseline GET /api/urls x32 concurrent', '/api/urls');
if (process.env.BENCH_BASELINE) await concurrent('baseline GET /api/files?limit=1 x32', '/api/files?limit=1');
await concurrent('list (default, limit 24) x32 concurrent', '/api/files');
await concurrent('list sortBy=name x32 concurrent', `/api/files${q({ sortBy: 'name' })}`);
await sequential('list default', '/api/files');
for (const sortBy of ['oldest', 'largest', 'smallest', 'name', 'most-viewed', 'least-downloaded']) await sequential(`list sortBy=${sortBy}`, `/api/files${q({ sortBy })}`);
await sequential('list page=100', `/api/files${q({ page: '100' })}`);
await sequential('list page=4000 (deep)', `/api/files${q({ page: '4000' })}`);
await sequential('list limit=100', `/api/files${q({ limit: '100' })}`);
await sequential('search "invoice" (common)', `/api/files${q({ search: 'invoice' })}`);
await sequential('search "ÄRGER" (non-ASCII)', `/api/files${q({ search: 'ÄRGER' })}`);
await sequential('search "f12345" (rare)', `/api/files${q({ search: 'f12345' })}`);
await sequential('search "page 777" (OCR)', `/api/files${q({ search: 'page 777' })}`);
await sequential('search "nothing-matches"', `/api/files${q({ search: 'nothing-matches' })}`);
await sequential('timeline groupBy=month', `/api/files/timeline${q({ groupBy: 'month' })}`);
await sequential('timeline groupBy=month tz=Europe/Berlin', `/api/files/timeline${q({ groupBy: 'month', timezone: 'Europe/Berlin' })}`);
await sequential('timeline groupBy=week tz=America/New_York', `/api/files/timeline${q({ groupBy: 'week', timezone: 'America/New_York' })}`);
await sequential('timeline groupBy=year', `/api/files/timeline${q({ groupBy: 'year' })}`);
await sequential('timeline month search=invoice', `/api/files/timeline${q({ groupBy: 'month', search: 'invoice' })}`);
await sequential('timeline sortBy=largest (one bucket)', `/api/files/timeline${q({ sortBy: 'largest' })}`);
await sequential('types', '/api/files/types');
await sequential('list types=image/png', `/api/files${q({ types: 'image/png' })}`);
await sequential('list folder', `/api/files${q({ folder: folderIds[3]! })}`);
await sequential('list folder=unfiled', `/api/files${q({ folder: 'unfiled' })}`);
await sequential('list tag', `/api/files${q({ tag: tagIds[2]! })}`);
await sequential('list tag=untagged', `/api/files${q({ tag: 'untagged' })}`);
await sequential('list visibility=private,hasPassword', `/api/files${q({ visibility: 'private,hasPassword' })}`);
await sequential('list dateFrom/dateTo (one month)', `/api/files${q({ dateFrom: new Date(now - 60 * 86_400_000).toISOString(), dateTo: new Date(now - 30 * 86_400_000).toISOString() })}`);
const middle = selected('gallery') && (await (await fetch(`${base}/api/files${q({ types: 'image/png', page: String(Math.max(1, Math.floor(fileCount / 200))) })}`, { headers: { authorization: `Bearer ${token}` } })).json()) as any;
await sequential('gallery next (anchor mid-way)', `/api/files${q({ galleryAnchor: middle ? middle.data[0].id : '', galleryDirection: 'next' })}`);

await server.close();
if (args.keep || args.reuse) console.log(`data kept in ${dataDir}${databaseUrl ? ` and ${databaseUrl}` : ''}; measure again with --reuse`);
else {
  cluster?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
