import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import pino from 'pino';
import SqliteDatabase from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { dialectUnderTest, freshDatabaseUrl, startTestServer, type TestServer } from '../support/server.ts';
import { openDatabase } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrator.ts';
import { enqueueJob, JobRunner } from '../../src/jobs/queue.ts';
import { signUp } from '../support/client.ts';
import { whileDatabaseClosed } from '../support/postgres.ts';
import { uploadFile } from '../support/uploads.ts';
import { WEBHOOK_DELIVERY_SLOTS } from '../../src/webhooks/delivery-job.ts';

/**
 * The background job runner of a real server under load: more jobs than its slots (webhook
 * deliveries have 16 of their own), each running longer than its poll interval (500 ms). A webhook receiver that answers slowly keeps every slot
 * busy while further uploads queue deliveries.
 */
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let server: TestServer;
let receiver: http.Server;
let receiverUrl = '';
const received: string[] = [];
let inFlight = 0;
let mostInFlight = 0;

beforeAll(async () => {
  receiver = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')).data.name as string);
      mostInFlight = Math.max(mostInFlight, ++inFlight);
      setTimeout(() => {
        inFlight--;
        response.end('ok');
      }, 700);
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/slow`;
  server = await startTestServer({ WEBHOOK_ALLOW_PRIVATE: 'true' });
});
afterAll(async () => {
  await server.close();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
});

describe('job runner', () => {
  it('delivers every webhook when deliveries outnumber the runner’s slots and outlast its poll interval', async () => {
    const owner = await signUp(server.baseUrl);
    expect((await owner.post('/api/webhooks', { name: 'slow receiver', url: receiverUrl })).status).toBe(201);
    const names = Array.from({ length: WEBHOOK_DELIVERY_SLOTS + 8 }, (_, n) => `upload-${n}.txt`);
    for (const name of names) expect((await uploadFile(owner, name, `content of ${name}`)).status).toBe(200);

    const deadline = Date.now() + 10_000;
    while (received.length < names.length && Date.now() < deadline) await sleep(50);
    expect(received.sort()).toEqual([...names].sort());
    // One slot per delivery, whether it was claimed alone or with others.
    expect(mostInFlight).toBeLessThanOrEqual(WEBHOOK_DELIVERY_SLOTS);
  });
});

describe('runDueJobs', () => {
  it('waits for a job the background loop was claiming at that moment', async () => {
    // A database of its own, so that no server's runner claims the job first.
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-race-'));
    const handle = openDatabase({ databaseUrl: (await freshDatabaseUrl()) ?? null, dataDir });
    const runner = new JobRunner({ db: handle.db, dialect: handle.dialect, log: pino({ level: 'silent' }) }, { task: async () => void (await sleep(100), (finished = true)) }, { pollIntervalMs: 60_000 });
    let finished = false;
    try {
      await migrate(handle.db);
      if (handle.dialect === 'postgres') {
        // The loop's claim holds the job's row for 300 ms before its statement returns; a claim
        // meanwhile skips that row (SKIP LOCKED) and finds nothing to run.
        await sql`create function slow_claim() returns trigger language plpgsql as $$ begin perform pg_sleep(0.3); return new; end $$`.execute(handle.db);
        await sql`create trigger slow_claim before update on jobs for each row execute function slow_claim()`.execute(handle.db);
      }
      await enqueueJob(handle.db, { type: 'task', payload: null });
      runner.start();
      // On PostgreSQL the loop's claim is now waiting in its trigger; on SQLite claims take turns.
      await sleep(100);
      await runner.runDueJobs();
      expect(finished).toBe(true);
    } finally {
      await runner.stop();
      await handle.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('the job queue while the database cannot be used', () => {
  /**
   * A job runner on a database of its own, polling every 50 ms, whose log lines are kept; `task`
   * jobs run `task`. `finish` stops it and removes the database.
   */
  async function watchedRunner(databaseUrl: string | null, task: () => Promise<void>) {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-job-queue-'));
    const handle = openDatabase({ databaseUrl, dataDir });
    const lines: Array<{ level: number; msg: string }> = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const runner = new JobRunner({ db: handle.db, dialect: handle.dialect, log }, { task }, { pollIntervalMs: 50 });
    await migrate(handle.db);
    return {
      dataDir,
      handle,
      runner,
      said: (text: string) => lines.filter((line) => line.msg.includes(text)),
      async finish() {
        await runner.stop();
        await handle.close();
        fs.rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }

  it('says so once, not on every poll, and again when the database is back', async () => {
    const databaseUrl = (await freshDatabaseUrl()) ?? null;
    const { dataDir, runner, said, finish } = await watchedRunner(databaseUrl, async () => {});
    try {
      runner.start();
      if (databaseUrl) {
        // PostgreSQL: the database closed to connections, its sessions ended; about 30 polls fail.
        await whileDatabaseClosed(inject('postgresUrl')!, databaseUrl, () => sleep(1500));
      } else {
        // SQLite: another process keeps the write lock; each claim waits 5 s for it, twice.
        const writer = new SqliteDatabase(path.join(dataDir, 'hoard.sqlite'));
        writer.prepare('begin immediate').run();
        await sleep(10_500);
        writer.prepare('rollback').run();
        writer.close();
      }
      await expect.poll(() => said('available again').length, { timeout: 15_000 }).toBe(1);
      expect(said('the database is unavailable')).toHaveLength(1);
      expect(said('could not claim jobs')).toHaveLength(0);
    } finally {
      await finish();
    }
  }, 60_000);

  // A database whose disk is full fails every claim of a due job (the claim writes its lease), as
  // one that is unavailable does: said once, not with an error and a stack twice a second into a log
  // that is likely on the same full disk. SQLite: a database that cannot grow (max_page_count), as
  // on a full disk; PostgreSQL's database is on a disk a test cannot fill.
  if (dialectUnderTest === 'sqlite') {
    it('says so once while the database is full, and again when it has room', async () => {
      let ran = 0;
      const { handle, runner, said, finish } = await watchedRunner(null, async () => void ran++);
      try {
        // Due jobs in small rows, appended so their pages are full: a claim's leases (some 50 bytes
        // more on each of several rows of a page) need pages the database cannot add.
        for (let i = 0; i < 400; i++) await enqueueJob(handle.db, { type: 'task', payload: { n: i } });
        const { page_count: pages } = (await sql<{ page_count: number }>`pragma page_count`.execute(handle.db)).rows[0]!;
        await sql.raw(`pragma max_page_count = ${pages}`).execute(handle.db);
        runner.start();
        await sleep(1500);
        expect(ran).toBe(0);
        await sql.raw('pragma max_page_count = 1073741823').execute(handle.db);
        await expect.poll(() => said('available again').length, { timeout: 15_000 }).toBe(1);
        await expect.poll(() => ran, { timeout: 15_000 }).toBe(400);
        expect(said('the database is out of space')).toHaveLength(1);
        expect(said('could not claim jobs')).toHaveLength(0);
      } finally {
        await finish();
      }
    }, 60_000);
  }
});
