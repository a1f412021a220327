import { createDatabase } from '../../test/support/postgres.ts';
import { seededRandom } from '../../test/support/random.ts';
import fs from 'node:fs';
import path from 'node:path';
import { sql, type Insertable } from 'kysely';
import { loadConfig } from '../../src/config.ts';
import { openDatabase, type Db, type Dialect } from '../../src/db/database.ts';
import type { Database } from '../../src/db/schema.ts';
import { migrate } from '../../src/db/migrator.ts';
import { ensureBuiltinRoles } from '../../src/auth/roles.ts';
import { ensureSettings, initialSettings } from '../../src/settings/instance-settings.ts';
import { register } from '../../src/accounts/users.ts';
import { createToken } from '../../src/tokens/named-tokens.ts';
import { foldForSearch } from '../../src/shared/search-text.ts';
import { thumbnailSourceOf } from '../../src/media/media-kinds.ts';
import { randomLowerAlnum } from '../../src/db/ids.ts';
import { mergeSearchIndex } from '../../src/listing/search-index.ts';
import { benchDir, freePort, startChild, type ChildServer } from './child.ts';

export interface HoardInstance {
  server: ChildServer;
  dataDir: string;
  databaseUrl: string | undefined;
  dialect: Dialect;
  userId: string;
  /** A named token with files:read and files:upload. */
  token: string;
  seededFiles: number;
  seedSeconds: number;
  /** The environment the server was started with (without its port). */
  env: Record<string, string>;
}

const repoRoot = benchDir('..');

/** The first account of every benchmarked instance (so its administrator), for a browser sign-in. */
export const BENCH_ACCOUNT = { email: 'bench@example.test', password: 'benchmark password 1' } as const;

/** A new, empty PostgreSQL database in the cluster at `adminUrl`. */
export const createPostgresDatabase = (adminUrl: string) => createDatabase(adminUrl, 'hoard_bench');

/**
 * Prepares a Hoard instance the way an operator would get one (migrated database, first account =
 * administrator, a named token made by the application's own functions), optionally seeds the
 * account with `files` files through Kysely, then starts `node src/main.ts` as a child process.
 */
export async function startHoard(options: { workDir: string; databaseUrl?: string | undefined; files?: number; env?: Record<string, string>; nodeArgs?: string[]; script?: string }): Promise<HoardInstance> {
  const dataDir = path.join(options.workDir, 'data');
  fs.mkdirSync(dataDir, { recursive: true });
  const env: Record<string, string> = {
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
    // The documented benchmark-only switch: the specification's 30 upload starts per minute would
    // otherwise throttle the small-file run.
    UPLOAD_RATE_LIMIT: '0',
    ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : {}),
    ...options.env,
  };

  const config = loadConfig(env);
  const database = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  let userId: string;
  let token: string;
  let seedSeconds = 0;
  try {
    await migrate(database.db);
    await ensureBuiltinRoles(database.db);
    await ensureSettings(database.db, initialSettings(config));
    const user = await register(database.db, database.dialect, { ...BENCH_ACCOUNT, ip: '127.0.0.1' });
    userId = user.id;
    token = (await createToken(database.db, database.dialect, userId, { name: 'bench', scopes: ['files:read', 'files:upload'] })).secret;
    if (options.files) {
      const started = performance.now();
      // The loader's own connection may keep the whole database in memory while it writes: every
      // seeded file goes into each sort's index at a random place (sizes, views and names are
      // independent draws), and with the server's 64 MiB page cache most of those pages had to be
      // read again through the operating system. Nor does the loader journal its writes: the seeding
      // is one process's bulk load of a new database, and a run that fails starts from scratch, so
      // writing each changed page to the WAL and again to the database at every checkpoint bought
      // nothing (200,000 files: 48.8–55.8 → 44.6–45.3 s). The rows, indexes and triggers are the
      // same. The server opens the database with its own settings, journal (WAL) included.
      if (database.dialect === 'sqlite') {
        await sql`pragma cache_size = -2097152`.execute(database.db);
        await sql`pragma journal_mode = OFF`.execute(database.db);
        await sql`pragma synchronous = OFF`.execute(database.db);
      }
      await seedAccount(database.db, database.dialect, userId, options.files, 'f', true, dataDir);
      // A second account, so every query really has to pick one account's rows.
      const other = await database.db
        .insertInto('users')
        .values({ id: `benchother${randomLowerAlnum(10)}`, email: 'other@example.test', name: 'Other', passwordHash: 'x', urlId: randomLowerAlnum(8), emailVerified: 1, quotaBytes: null, uploadToken: null, uploadTokenHash: null, defaultProfileId: null, uploadDefaults: null, createdAt: Date.now(), updatedAt: Date.now() })
        .returning('id')
        .executeTakeFirstOrThrow();
      await seedAccount(database.db, database.dialect, other.id, Math.min(options.files, 5000), 'o', false, dataDir);
      // PostgreSQL's autovacuum would analyse (and vacuum, for index-only scans) a table that just
      // grew by 100,000 rows within a minute; doing it now makes the run independent of that timing.
      // SQLite gets nothing: Hoard never runs ANALYZE there, so its planner works without statistics.
      if (database.dialect === 'postgres') await sql`vacuum analyze`.execute(database.db);
      // SQLite's search index as the server's daily upkeep leaves it (src/listing/search-index.ts):
      // seeding in transactions of 20,000 files leaves it in a dozen segments, as years of uploads
      // would. Merged here in large steps, with no requests to give way to.
      else await mergeSearchIndex(database.db, { pause: false, stepPages: 5000 });
      seedSeconds = (performance.now() - started) / 1000;
      // The account must look exactly as if its files had been uploaded: its counters agree with its rows.
      for (const id of [userId, other.id]) {
        const counters = await database.db.selectFrom('users').select(['fileCount', 'usedBytes']).where('id', '=', id).executeTakeFirstOrThrow();
        const actual = await database.db
          .selectFrom('files')
          .select((eb) => [eb.fn.countAll<number | string>().as('files'), eb.fn.sum<number | string>('size').as('bytes')])
          .where('userId', '=', id)
          .executeTakeFirstOrThrow();
        if (Number(counters.fileCount) !== Number(actual.files) || Number(counters.usedBytes) !== Number(actual.bytes)) {
          throw new Error(`seeded account ${id}: fileCount ${counters.fileCount} / usedBytes ${counters.usedBytes}, but ${actual.files} files of ${actual.bytes} bytes`);
        }
      }
    }
  } finally {
    await database.close();
  }

  const server = await startHoardProcess({ workDir: options.workDir, env, name: `hoard-${database.dialect}`, ...(options.nodeArgs ? { nodeArgs: options.nodeArgs } : {}), ...(options.script ? { script: options.script } : {}) });
  return { server, dataDir, databaseUrl: options.databaseUrl, dialect: database.dialect, userId, token, seededFiles: options.files ?? 0, seedSeconds, env };
}

/**
 * `node src/main.ts` as a child process with `env` (plus a free port), e.g. a second process on the
 * data of an instance made by startHoard(): `startHoardProcess({ ...instance, env: { ...instance.env, X: '1' } })`.
 */
export async function startHoardProcess(options: { workDir: string; env: Record<string, string>; name: string; nodeArgs?: string[]; script?: string }): Promise<ChildServer> {
  const port = await freePort();
  return startChild({
    name: options.name,
    script: options.script ?? path.join(repoRoot, 'src', 'main.ts'),
    ...(options.nodeArgs ? { nodeArgs: options.nodeArgs } : {}),
    env: { ...options.env, PORT: String(port), BASE_URL: `http://127.0.0.1:${port}` },
    cwd: options.workDir,
    port,
    readyPath: '/api/health',
    logFile: path.join(options.workDir, `${options.name}.log`),
  });
}

/** Words of screenshots and scans, for the seeded files' recognised text. */
const textWords = (
  'the of and to in for on with from by at as is are was be this that it total page date amount due paid order number customer account ' +
  'report meeting budget project team review update status price quantity tax net gross shipping delivery address phone email ' +
  'monday tuesday march april revenue cost forecast approved pending ticket support server error warning settings window file ' +
  'download upload share link folder screen chat message reply sent received'
).split(' ');

function ocrWords(random: () => number, count: number, i: number): string {
  const out: string[] = [];
  for (let n = 0; n < count; n++) out.push(textWords[Math.floor(random() * textWords.length)]!);
  // The searched word is in the text of one image in thirty (and in one name in fifteen).
  if (random() < 1 / 30) out.splice(Math.floor(random() * out.length), 0, SEARCH_TERM);
  // A number of its own on every page, as invoices and tickets have.
  out.push(`no. ${i}`);
  return out.join(' ');
}

const words = ['holiday', 'invoice', 'screenshot', 'report', 'Ärger', 'draft', 'scan', 'photo', 'backup', 'notes', 'résumé', 'budget', 'diagram', 'meeting', 'straße'];
const types = ['image/png', 'image/png', 'image/jpeg', 'image/jpeg', 'image/webp', 'text/plain', 'application/pdf', 'video/mp4', 'application/zip', 'image/gif'];
export const SEARCH_TERM = 'invoice';

/**
 * `count` files for one account, inserted through Kysely in statements of 1,000 rows, with the
 * columns the application writes (folded search text included). Upload times are spread over three
 * years in insertion order, as uploads arrive; 10 folders and 10 tags, 30 % of files tagged, every
 * image (60 %) with recognised text of 40 to 160 words. The account's `usedBytes` is charged with the seeded sizes (its `fileCount` is kept
 * by the schema's own triggers), so the account looks exactly as if the files had been uploaded.
 */
async function seedAccount(db: Db, dialect: Dialect, userId: string, count: number, prefix: string, organise: boolean, dataDir: string): Promise<void> {
  // Empty stand-ins for the newest files' bytes (local storage keeps key K at DATA_DIR/files/K): a
  // process refuses to start on a DATA_DIR that holds none of the database's newest files
  // (src/storage/data-dir-check.ts); the figures never read bytes.
  const storageRoot = path.join(dataDir, 'files');
  fs.mkdirSync(path.join(storageRoot, 'files', userId), { recursive: true });
  const now = Date.now();
  const folderIds = organise ? Array.from({ length: 10 }, () => `benchfolder${randomLowerAlnum(9)}`) : [];
  const tagIds = organise ? Array.from({ length: 10 }, () => `benchtag${randomLowerAlnum(12)}`) : [];
  if (organise) {
    await db.insertInto('folders').values(folderIds.map((id, i) => ({ id, userId, name: `Folder ${i}`, parentId: null, createdAt: now, updatedAt: now }))).execute();
    await db.insertInto('tags').values(tagIds.map((id, i) => ({ id, userId, name: `tag ${i}`, createdAt: now }))).execute();
  }
  // Numbered in SQLite's search index as commitFile numbers uploads (migration 0020-search-documents);
  // PostgreSQL has no numbers (accountNo is null there).
  const { accountNo } = await db.selectFrom('users').select('accountNo').where('id', '=', userId).executeTakeFirstOrThrow();
  const span = 3 * 365 * 86_400_000;
  // Independent draws (test/support/random.ts): sizes, views and words do not follow one another.
  const random = seededRandom(prefix === 'f' ? 42 : 7);
  let usedBytes = 0;
  // Statements of 1,000 rows (within SQLite's limit on parameters). SQLite commits 20 of them at a
  // time: a commit writes every index page the transaction changed, and with independent sizes,
  // views and names 1,000 files change about as many pages of each sort's index as 20,000 do.
  // PostgreSQL's server process, not this one, is the loader's bottleneck there (one core busy, the
  // other nearly idle), so two transactions run at once, each of one statement: the statement-level
  // triggers lock the account's counter rows until the commit, and a transaction of 20 statements
  // would hold them while the other waited. Neighbouring transactions hold neighbouring upload
  // times, so the table stays in upload order but for runs of 1,000 rows.
  const parallel = dialect === 'postgres' ? 2 : 1;
  const perTransaction = parallel > 1 ? 1000 : 20_000;
  const pending: Promise<void>[] = [];
  for (let start = 0; start < count; start += perTransaction) {
    const statements: Array<{ rows: Insertable<Database['files']>[]; fileTags: Insertable<Database['fileTags']>[]; last: boolean }> = [];
    for (let offset = start; offset < Math.min(count, start + perTransaction); offset += 1000) {
      const rows: Insertable<Database['files']>[] = [];
      const fileTags: Insertable<Database['fileTags']>[] = [];
      for (let i = offset; i < Math.min(count, offset + 1000); i++) {
        const createdAt = now - span + Math.floor(((i + random()) * span) / count);
        const id = createdAt.toString(36).padStart(9, '0') + randomLowerAlnum(11);
        const word = words[Math.floor(random() * words.length)]!;
        const mimeType = types[Math.floor(random() * types.length)]!;
        const name = `${word}-${prefix}${i}.${mimeType.split('/')[1]}`;
        const size = Math.floor(random() * 20_000_000);
        // Every image has recognised text, as it would with text recognition on (contract §10): a
        // screenshot's worth of words, 40 to 160 of them.
        const ocrText = mimeType.startsWith('image/') ? ocrWords(random, 40 + Math.floor(random() * 120), i) : null;
        usedBytes += size;
        rows.push({
          id,
          userId,
          name,
          originalName: name,
          storageKey: `files/${userId}/${id}`,
          mimeType,
          size,
          sha256: '0'.repeat(64),
          visibility: random() < 0.7 ? 'PUBLIC' : 'PRIVATE',
          passwordHash: null,
          expiresAt: null,
          expiryAction: null,
          folderId: folderIds.length && random() < 0.5 ? folderIds[Math.floor(random() * folderIds.length)]! : null,
          shareStyle: 'framed',
          views: Math.floor(random() * 1000),
          downloads: Math.floor(random() * 100),
          ocrText,
          searchName: foldForSearch(name),
          searchOcr: ocrText === null ? null : foldForSearch(ocrText),
          // Media work done, as on a library that has been in use (no backfill runs during the figures).
          // Every row names the same columns: Kysely writes DEFAULT for a column a row lacks, so each
          // statement's SQL differed and SQLite prepared every one anew (about 10 ms each, 10 s of a
          // million files).
          ...(thumbnailSourceOf(mimeType) !== null
            ? { thumbnailStatus: 'done' as const, thumbnailKey: `files/${userId}/${id}.thumb-seeded.webp`, thumbnailWidth: 512, thumbnailHeight: 384 }
            : { thumbnailStatus: 'unsupported' as const, thumbnailKey: null, thumbnailWidth: null, thumbnailHeight: null }),
          ocrStatus: ocrText === null ? 'unsupported' : 'done',
          docId: accountNo === null ? null : accountNo * 2 ** 32 + i + 1,
          // Set below when the file gets a tag, as the database would (migration 0031-tagged-files).
          tagged: 0,
          createdAt,
          updatedAt: createdAt,
        });
        // The upload time and the file's columns beside the tag, as the application writes them
        // (migrations 0030-tag-upload-times, 0052-tag-combinations).
        if (tagIds.length && random() < 0.3) {
          const row = rows[rows.length - 1]!;
          const facets = { mimeType, visibility: row.visibility, password: row.passwordHash === null ? 0 : 1, folderId: row.folderId ?? '' };
          fileTags.push({ fileId: id, tagId: tagIds[Math.floor(random() * tagIds.length)]!, excluded: 0, createdAt, ...facets });
          rows[rows.length - 1]!.tagged = 1;
        }
      }
      statements.push({ rows, fileTags, last: offset + 1000 >= count });
    }
    pending.push(
      db.transaction().execute(async (trx) => {
        for (const { rows, fileTags, last } of statements) {
          await trx.insertInto('files').values(rows).execute();
          if (fileTags.length) await trx.insertInto('fileTags').values(fileTags).execute();
          // The check samples the newest files, which are the last ones seeded.
          if (last) for (const row of rows) fs.writeFileSync(path.join(storageRoot, row.storageKey), '');
        }
      }),
    );
    if (pending.length >= parallel) await pending.shift();
  }
  await Promise.all(pending);
  await db.updateTable('users').set((eb) => ({ usedBytes: eb('usedBytes', '+', usedBytes), docSeq: count })).where('id', '=', userId).execute();
}
