import path from 'node:path';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sql } from 'kysely';
import pg from 'pg';
import SqliteDatabase from 'better-sqlite3';
import { dialectUnderTest, freshDatabaseUrl, migratedDatabaseUrl, startTestServer, type TestServer } from '../support/server.ts';
import { uploadFile } from '../support/uploads.ts';
import { isDatabaseUnavailable, openDatabase, prepared, withSessionSettings } from '../../src/db/database.ts';
import { signUp } from '../support/client.ts';
import { whileDatabaseClosed } from '../support/postgres.ts';

// The database layer's performance measures must not change what a query means.

let server: TestServer;
let userId: string;
let owner: Awaited<ReturnType<typeof signUp>>;

beforeAll(async () => {
  server = await startTestServer();
  owner = await signUp(server.baseUrl);
  userId = owner.userId;
});
afterAll(() => server.close());

describe('database layer', () => {
  it('compares parameters exactly as before, joins and LIMIT included (SQLite writes them +?)', async () => {
    const { db } = server.ctx;
    const user = await db.selectFrom('users').select(['id', 'createdAt']).where('id', '=', userId).executeTakeFirstOrThrow();
    // A numeric text compared with an integer column: the column's affinity (SQLite) or type (PostgreSQL) applies.
    const byText = await db.selectFrom('users').select('id').where('createdAt', '=', String(user.createdAt) as unknown as number).execute();
    expect(byText.map((r) => r.id)).toEqual([userId]);
    // A join with parameters, and a LIMIT from a parameter, rebound with new values on each run.
    for (const limit of [1, 2, 1]) {
      const rows = await db
        .selectFrom('users')
        .innerJoin('userRoles', 'userRoles.userId', 'users.id')
        .innerJoin('roles', 'roles.id', 'userRoles.roleId')
        .select(['users.id', 'roles.systemKey'])
        .where('users.id', '=', userId)
        .limit(limit)
        .execute();
      expect(rows).toEqual([{ id: userId, systemKey: 'administrator' }].slice(0, limit));
    }
    const none = await db.selectFrom('users').innerJoin('userRoles', 'userRoles.userId', 'users.id').select('users.id').where('users.id', '=', 'nobody').execute();
    expect(none).toEqual([]);
  });

  it('runs every marked (prepared) statement; a PostgreSQL connection keeps at most 200 of them prepared', async () => {
    const databaseUrl = (dialectUnderTest === 'postgres' ? await freshDatabaseUrl() : null) ?? null;
    const handle = openDatabase({ databaseUrl, dataDir: server.dataDir, poolSize: 1 });
    try {
      for (let i = 0; i < 250; i++) {
        const row = await sql<{ n: number }>`select ${sql.lit(i)} + ${1} as n ${prepared}`.execute(handle.db);
        expect(Number(row.rows[0]!.n)).toBe(i + 1);
      }
      if (handle.dialect === 'postgres') {
        const kept = await sql<{ n: string }>`select count(*) as n from pg_prepared_statements`.execute(handle.db);
        expect(Number(kept.rows[0]!.n)).toBe(200);
      }
    } finally {
      await handle.close();
    }
  });

  it('opens PostgreSQL sessions with the JIT compiler and parallel workers off, keeping options the URL gives', async () => {
    if (dialectUnderTest !== 'postgres') {
      // SQLite has no such setting: the URL helper still composes options for a PostgreSQL URL.
      expect(new URL(withSessionSettings('postgres://u@h:5432/d?options=-c%20search_path%3Dx')).searchParams.get('options')).toBe('-c search_path=x -c jit=off -c max_parallel_workers_per_gather=0');
      return;
    }
    const base = new URL((await freshDatabaseUrl())!);
    base.searchParams.set('options', '-c statement_timeout=12345');
    const handle = openDatabase({ databaseUrl: base.toString(), dataDir: server.dataDir, poolSize: 1 });
    try {
      const jit = await sql<{ jit: string }>`show jit`.execute(handle.db);
      expect(jit.rows[0]!.jit).toBe('off');
      const workers = await sql<{ max_parallel_workers_per_gather: string }>`show max_parallel_workers_per_gather`.execute(handle.db);
      expect(workers.rows[0]!.max_parallel_workers_per_gather).toBe('0');
      const timeout = await sql<{ statement_timeout: string }>`show statement_timeout`.execute(handle.db);
      expect(timeout.rows[0]!.statement_timeout).toBe('12345ms');
    } finally {
      await handle.close();
    }
  });

  if (dialectUnderTest === 'postgres') {
    /**
     * A TCP relay in front of a PostgreSQL database, as a proxy or a network path between Hoard and
     * it: `wire` joins each connection to its upstream (both ways as they are, by default).
     */
    async function relayTo(databaseUrl: string, wire = (client: net.Socket, upstream: net.Socket) => void client.pipe(upstream).pipe(client)) {
      const target = new URL(databaseUrl);
      const open = new Set<net.Socket>();
      const proxy = net.createServer((client) => {
        const upstream = net.connect(Number(target.port), target.hostname);
        for (const socket of [client, upstream]) {
          open.add(socket);
          socket.on('error', () => {});
          socket.on('close', () => open.delete(socket));
        }
        wire(client, upstream);
      });
      await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
      const url = new URL(target);
      url.host = `127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
      return {
        url: url.toString(),
        open,
        close() {
          for (const socket of open) socket.destroy();
          proxy.close();
        },
      };
    }

    it('counts a PostgreSQL connection reset in the middle of a statement as the database unavailable, not as a bug', async () => {
      // Between Hoard and PostgreSQL, something that resets the connection (a proxy, a firewall, a
      // backend ended as it was being read from): the statement fails with the socket's ECONNRESET.
      const relay = await relayTo((await freshDatabaseUrl())!);
      const handle = openDatabase({ databaseUrl: relay.url, dataDir: server.dataDir, poolSize: 1 });
      try {
        await sql`select 1`.execute(handle.db);
        const running = sql`select pg_sleep(2)`.execute(handle.db).then(() => null, (error: unknown) => error);
        await new Promise((resolve) => setTimeout(resolve, 300));
        for (const socket of relay.open) socket.resetAndDestroy();
        const failure = await running;
        expect(failure, 'the statement failed').not.toBeNull();
        expect(isDatabaseUnavailable(failure), String(failure)).toBe(true);
      } finally {
        await handle.close();
        relay.close();
      }
    });

    it("keeps the bytes of an upload whose COMMIT went through but whose answer was lost", async () => {
      // The connection breaks after PostgreSQL took the COMMIT and before its answer arrived: the
      // file exists, and the upload cannot know it. Its bytes used to be removed as a failed upload's,
      // leaving a file with no bytes.
      let armed = false;
      const relay = await relayTo((await migratedDatabaseUrl())!, (client, upstream) => {
        let wroteFile = false;
        let cutting = false;
        client.on('data', (chunk: Buffer) => {
          const text = chunk.toString('latin1').toLowerCase();
          if (armed && text.includes('insert into "files"')) wroteFile = true;
          // The simple-query message of the COMMIT that follows the file's insert on this connection.
          if (armed && wroteFile && text.includes('commit\0')) {
            armed = false;
            cutting = true;
          }
          upstream.write(chunk);
        });
        upstream.on('data', (chunk: Buffer) => {
          if (!cutting) return void client.write(chunk);
          // PostgreSQL answered the COMMIT: it is done. The answer is lost with the connection.
          client.resetAndDestroy();
          upstream.destroy();
        });
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      });
      const cut = await startTestServer({}, { databaseUrl: relay.url });
      try {
        const uploader = await signUp(cut.baseUrl);
        armed = true;
        const answer = await uploadFile(uploader, 'committed.txt', 'bytes of a committed file');
        expect(armed, 'the COMMIT was cut off').toBe(false);
        expect(answer.status, answer.text).toBeGreaterThanOrEqual(500);
        const files = await cut.ctx.db.selectFrom('files').select(['id', 'storageKey', 'size']).where('userId', '=', uploader.userId).execute();
        expect(files).toHaveLength(1);
        expect(await cut.ctx.storage.stat(files[0]!.storageKey)).toMatchObject({ size: files[0]!.size });
        const listed = await uploader.get('/api/files');
        expect(listed.status).toBe(200);
        const served = await uploader.get(`/api/files/${files[0]!.id}/download`);
        expect([served.status, served.text]).toEqual([200, 'bytes of a committed file']);
      } finally {
        await cut.close();
        relay.close();
      }
    });
  }

  it('keeps serving while something else acts on the database: PostgreSQL ending its connections, another reader of SQLite', async () => {
    // Several requests at once leave several connections idle in the pool (PostgreSQL).
    const statuses = await Promise.all(Array.from({ length: 6 }, () => owner.get('/api/files?limit=5').then((r) => r.status)));
    expect(statuses).toEqual(Array(6).fill(200));
    if (server.ctx.dialect === 'postgres') {
      // What a restart of PostgreSQL, an administrator or a proxy that drops idle sessions does to
      // the server's idle connections: each ends with an error the pool reports, and the server lives on.
      const admin = new pg.Client({ connectionString: server.databaseUrl });
      await admin.connect();
      try {
        const ended = await admin.query<{ ended: boolean }>('select pg_terminate_backend(pid) as ended from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()');
        expect(ended.rows.filter((row) => row.ended).length).toBeGreaterThan(0);
      } finally {
        await admin.end();
      }
    } else {
      // Another process reading the database file (a backup, the command line) holds a snapshot open.
      const reader = new SqliteDatabase(path.join(server.dataDir, 'hoard.sqlite'), { readonly: true });
      try {
        reader.prepare('begin').run();
        expect(Number((reader.prepare('select count(*) as n from users').get() as { n: number }).n)).toBeGreaterThan(0);
        const upload = await owner.post('/api/tags', { name: 'written beside a reader' });
        expect(upload.status, upload.text).toBe(201);
        reader.prepare('commit').run();
      } finally {
        reader.close();
      }
    }
    // Connections ended while idle are replaced: the requests that follow, reads and writes, succeed.
    await expect.poll(async () => (await owner.get('/api/files?limit=5')).status).toBe(200);
    if (server.ctx.dialect === 'postgres') {
      // A connection ended while in use, between two statements of a transaction: the transaction
      // fails as the database being unavailable, and nothing else. An error Node could not deliver
      // would end the server's process; it is recorded here too.
      const uncaught: unknown[] = [];
      const record = (error: unknown) => uncaught.push(error);
      process.prependListener('uncaughtException', record);
      const admin = new pg.Client({ connectionString: server.databaseUrl });
      await admin.connect();
      try {
        const transaction = server.ctx.db.transaction().execute(async (trx) => {
          const pid = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)).rows[0]!.pid;
          expect((await admin.query('select pg_terminate_backend($1) as ended', [pid])).rows[0].ended).toBe(true);
          await expect.poll(async () => (await admin.query('select count(*)::int as n from pg_stat_activity where pid = $1', [pid])).rows[0].n).toBe(0);
          await new Promise((resolve) => setTimeout(resolve, 50));
          await sql`select 1`.execute(trx);
        });
        const failure = await transaction.then(() => null, (error: unknown) => error);
        expect(isDatabaseUnavailable(failure), String(failure)).toBe(true);
      } finally {
        await admin.end();
        process.removeListener('uncaughtException', record);
      }
      expect(uncaught.map(String)).toEqual([]);
    }
    for (let i = 0; i < 12; i++) {
      const response = i % 3 === 0 ? await owner.post('/api/tags', { name: `after ${i}` }) : await owner.get('/api/files?limit=5');
      expect(response.status, response.text).toBe(i % 3 === 0 ? 201 : 200);
    }
  });

  it('keeps serving reads while a write waits for a lock another process holds, and then makes the write', async () => {
    // Another process (a second worker, the import command, a hand-run sqlite3 or psql session)
    // holds the lock a tag's creation needs, for 3 s. The creation waits for it; listings of the
    // same process must not wait with it (held, the process sat in SQLite's 5 s wait).
    const HELD_MS = 3000;
    let release: () => Promise<void>;
    if (server.ctx.dialect === 'postgres') {
      const other = new pg.Client({ connectionString: server.databaseUrl! });
      await other.connect();
      await other.query('begin');
      // Conflicts with the insert's lock, not with reads.
      await other.query('lock table tags in share row exclusive mode');
      release = async () => {
        await other.query('commit');
        await other.end();
      };
    } else {
      const other = new SqliteDatabase(path.join(server.dataDir, 'hoard.sqlite'));
      other.prepare('begin immediate').run();
      release = async () => {
        other.prepare('rollback').run();
        other.close();
      };
    }
    const heldUntil = Date.now() + HELD_MS;
    const released = new Promise<void>((resolve, reject) => setTimeout(() => release().then(resolve, reject), HELD_MS));
    const creating = owner.post('/api/tags', { name: 'made after the lock' });
    try {
      await new Promise((resolve) => setTimeout(resolve, 200));
      for (let i = 0; i < 3; i++) {
        const started = Date.now();
        const listing = await owner.get('/api/files?limit=5');
        expect(listing.status, listing.text).toBe(200);
        expect(Date.now() - started).toBeLessThan(1000);
      }
      expect(Date.now()).toBeLessThan(heldUntil);
    } finally {
      await released;
    }
    const created = await creating;
    expect(created.status, created.text).toBe(201);
    const tags = (await owner.get('/api/tags')).body as { data: { tags: Array<{ name: string }> } };
    expect(tags.data.tags.map((t) => t.name)).toContain('made after the lock');
  });

  it('answers 503 with Retry-After while the database cannot be used, and serves again once it can', async () => {
    // A 503 says "try again shortly", which ShareX and scripts act on; a 500 says the server is broken.
    const expectUnavailable = async (response: Awaited<ReturnType<typeof owner.get>>) => {
      expect(response.status, response.text).toBe(503);
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((response.body as { error: string }).error).toMatch(/database/i);
    };
    if (server.ctx.dialect === 'postgres') {
      // PostgreSQL stopped, or the database closed to connections: no connection can be opened.
      await whileDatabaseClosed(inject('postgresUrl')!, server.databaseUrl!, async () => {
        await expect.poll(async () => (await owner.get('/api/files?limit=5')).status).toBe(503);
        await expectUnavailable(await owner.get('/api/files?limit=5'));
        await expectUnavailable(await owner.post('/api/tags', { name: 'while closed' }));
      });
    } else {
      // Another process holds SQLite's write lock past the wait for it (5 s).
      const writer = new SqliteDatabase(path.join(server.dataDir, 'hoard.sqlite'));
      try {
        writer.prepare('begin immediate').run();
        await expectUnavailable(await owner.post('/api/tags', { name: 'while locked' }));
        writer.prepare('rollback').run();
      } finally {
        writer.close();
      }
    }
    const after = await owner.post('/api/tags', { name: 'once it can' });
    expect(after.status, after.text).toBe(201);
    expect((await owner.get('/api/files?limit=5')).status).toBe(200);
  });
});
