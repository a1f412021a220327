import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrator.ts';
import { addJobIfAbsent, cancelJob, dropJob, enqueueJob, JobRunner, retryJob, type ClaimedJob, type JobHandlers } from '../../src/jobs/queue.ts';

const log = pino({ level: 'silent' });
let dataDir: string;
let handle: DatabaseHandle;
const extraHandles: DatabaseHandle[] = [];
const runners: JobRunner[] = [];

beforeEach(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-jobs-'));
  handle = openDatabase({ databaseUrl: null, dataDir });
  await migrate(handle.db);
});

afterEach(async () => {
  for (const runner of runners.splice(0)) await runner.stop();
  for (const extra of extraHandles.splice(0)) await extra.close();
  await handle.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

function runner(handlers: JobHandlers, options: ConstructorParameters<typeof JobRunner>[2] = {}, on: DatabaseHandle = handle): JobRunner {
  const created = new JobRunner({ db: on.db, dialect: on.dialect, log }, handlers, options);
  runners.push(created);
  return created;
}

const jobRows = () => handle.db.selectFrom('jobs').selectAll().orderBy('createdAt').execute();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(20);
  }
}

describe('enqueueJob and runDueJobs', () => {
  it('runs a due job once with its payload, then deletes it', async () => {
    const seen: ClaimedJob[] = [];
    const jobs = runner({ greet: async (job) => void seen.push(job) });
    const id = await enqueueJob(handle.db, { type: 'greet', payload: { name: 'Ada', n: [1, 2] } });
    expect(await jobs.runDueJobs()).toBe(1);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ id, type: 'greet', payload: { name: 'Ada', n: [1, 2] }, attempt: 1, lastError: null, dedupeKey: null });
    expect(await jobRows()).toEqual([]);
    expect(await jobs.runDueJobs()).toBe(0);
  });

  it('does not start a job before runAt', async () => {
    let runs = 0;
    const jobs = runner({ later: async () => void runs++ });
    await enqueueJob(handle.db, { type: 'later', payload: null, runAt: Date.now() + 300 });
    expect(await jobs.runDueJobs()).toBe(0);
    await sleep(350);
    expect(await jobs.runDueJobs()).toBe(1);
    expect(runs).toBe(1);
  });

  it('is part of the caller’s transaction', async () => {
    const jobs = runner({ audit: async () => undefined });
    await expect(
      handle.db.transaction().execute(async (trx) => {
        await enqueueJob(trx, { type: 'audit', payload: 1 });
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await jobRows()).toEqual([]);
    await handle.db.transaction().execute((trx) => enqueueJob(trx, { type: 'audit', payload: 2 }));
    expect(await jobs.runDueJobs()).toBe(1);
  });

  it('leaves job types it has no handler for to other runners', async () => {
    const jobs = runner({ known: async () => undefined });
    await enqueueJob(handle.db, { type: 'unknown', payload: null });
    expect(await jobs.runDueJobs()).toBe(0);
    expect(await jobRows()).toHaveLength(1);
  });
});

describe('outcomes', () => {
  it('retryJob reschedules with the error; the next attempt sees it', async () => {
    const attempts: ClaimedJob[] = [];
    const jobs = runner({
      flaky: async (job) => {
        attempts.push(job);
        if (job.attempt < 3) return retryJob(50, `failure ${job.attempt}`);
      },
    });
    await enqueueJob(handle.db, { type: 'flaky', payload: 'x' });
    expect(await jobs.runDueJobs()).toBe(1);
    const [waiting] = await jobRows();
    expect(waiting).toMatchObject({ attempts: 1, lastError: 'failure 1', leasedBy: null, leasedUntil: null });
    expect(waiting!.runAt).toBeGreaterThan(Date.now());
    // Rescheduled jobs are not re-run by the same call.
    expect(await jobs.runDueJobs()).toBe(0);
    await sleep(60);
    await jobs.runDueJobs();
    await sleep(60);
    await jobs.runDueJobs();
    expect(attempts.map((a) => [a.attempt, a.lastError])).toEqual([
      [1, null],
      [2, 'failure 1'],
      [3, 'failure 2'],
    ]);
    expect(await jobRows()).toEqual([]);
  });

  it('dropJob deletes the job for good', async () => {
    const jobs = runner({ doomed: async () => dropJob('cannot ever work') });
    await enqueueJob(handle.db, { type: 'doomed', payload: null });
    expect(await jobs.runDueJobs()).toBe(1);
    expect(await jobRows()).toEqual([]);
  });

  it('a thrown error is retried with the default back-off, then dropped after maxAttemptsOnError', async () => {
    let runs = 0;
    const jobs = runner(
      {
        broken: async () => {
          runs++;
          throw new Error('boom');
        },
      },
      { maxAttemptsOnError: 2 },
    );
    await enqueueJob(handle.db, { type: 'broken', payload: null });
    const before = Date.now();
    await jobs.runDueJobs();
    const [row] = await jobRows();
    expect(row).toMatchObject({ attempts: 1, lastError: 'boom' });
    // 10 s ± 20 %.
    expect(row!.runAt).toBeGreaterThanOrEqual(before + 8000);
    expect(row!.runAt).toBeLessThanOrEqual(Date.now() + 12_000);
    await handle.db.updateTable('jobs').set({ runAt: Date.now() }).execute();
    await jobs.runDueJobs();
    expect(runs).toBe(2);
    expect(await jobRows()).toEqual([]);
  });
});

describe('dedupeKey', () => {
  it('keeps one job per key; enqueueing again replaces payload, runAt and attempts', async () => {
    const first = await enqueueJob(handle.db, { type: 'expire', payload: { v: 1 }, runAt: Date.now() + 60_000, dedupeKey: 'expire:file1' });
    await handle.db.updateTable('jobs').set({ attempts: 3, lastError: 'old' }).execute();
    const second = await enqueueJob(handle.db, { type: 'expire', payload: { v: 2 }, runAt: Date.now() - 1, dedupeKey: 'expire:file1' });
    await enqueueJob(handle.db, { type: 'expire', payload: { v: 9 }, dedupeKey: 'expire:file2' });
    expect(second).toBe(first);
    const rows = await jobRows();
    expect(rows).toHaveLength(2);
    expect(rows.find((r) => r.id === first)).toMatchObject({ payload: '{"v":2}', attempts: 0, lastError: null });

    const seen: unknown[] = [];
    const jobs = runner({ expire: async (job) => void seen.push(job.payload) });
    expect(await jobs.runDueJobs()).toBe(2);
    expect(seen).toEqual(expect.arrayContaining([{ v: 2 }, { v: 9 }]));
    // A key can be used again once its job is gone.
    await enqueueJob(handle.db, { type: 'expire', payload: { v: 3 }, dedupeKey: 'expire:file1' });
    expect(await jobRows()).toHaveLength(1);
  });

  it('addJobIfAbsent adds a keyed job once and leaves an existing one, lease and all, as it is', async () => {
    await addJobIfAbsent(handle.db, { type: 'expire', payload: { v: 1 }, dedupeKey: 'expire:file1' });
    await handle.db.updateTable('jobs').set({ attempts: 2, leasedBy: 'someone', leasedUntil: Date.now() + 60_000, lastError: 'kept' }).execute();
    await addJobIfAbsent(handle.db, { type: 'expire', payload: { v: 2 }, runAt: Date.now() - 1, dedupeKey: 'expire:file1' });
    await addJobIfAbsent(handle.db, { type: 'expire', payload: { v: 9 }, dedupeKey: 'expire:file2' });
    const rows = await jobRows();
    expect(rows).toHaveLength(2);
    expect(rows.find((r) => r.dedupeKey === 'expire:file1')).toMatchObject({ payload: '{"v":1}', attempts: 2, leasedBy: 'someone', lastError: 'kept' });
    expect(rows.find((r) => r.dedupeKey === 'expire:file2')).toMatchObject({ payload: '{"v":9}', attempts: 0, leasedBy: null });
  });

  it('cancelJob removes the keyed job', async () => {
    await enqueueJob(handle.db, { type: 'expire', payload: null, dedupeKey: 'expire:x' });
    expect(await cancelJob(handle.db, 'expire:x')).toBe(true);
    expect(await cancelJob(handle.db, 'expire:x')).toBe(false);
    expect(await jobRows()).toEqual([]);
  });

  it('replacing a running job discards that attempt’s result and runs the new version', async () => {
    const gate = deferred();
    const started = deferred();
    const seen: unknown[] = [];
    const jobs = runner({
      sweep: async (job) => {
        seen.push(job.payload);
        if (job.payload === 'old') {
          started.resolve();
          await gate.promise;
        }
      },
    });
    await enqueueJob(handle.db, { type: 'sweep', payload: 'old', dedupeKey: 'sweep' });
    const running = jobs.runDueJobs();
    await started.promise;
    await enqueueJob(handle.db, { type: 'sweep', payload: 'new', dedupeKey: 'sweep', runAt: Date.now() + 100 });
    gate.resolve();
    await running;
    // The old attempt finished "done", but the replaced job is still there.
    expect(await jobRows()).toMatchObject([{ payload: '"new"', attempts: 0 }]);
    await sleep(120);
    await jobs.runDueJobs();
    expect(seen).toEqual(['old', 'new']);
    expect(await jobRows()).toEqual([]);
  });
});

describe('leases', () => {
  it('a job whose lease expired (its process died) is claimed again as the next attempt', async () => {
    const id = await enqueueJob(handle.db, { type: 'work', payload: null });
    // What a process killed mid-job leaves behind.
    await handle.db.updateTable('jobs').set({ attempts: 1, leasedBy: 'dead-host:1:abc', leasedUntil: Date.now() + 60_000 }).execute();
    const seen: number[] = [];
    const jobs = runner({ work: async (job) => void seen.push(job.attempt) });
    expect(await jobs.runDueJobs()).toBe(0);
    await handle.db.updateTable('jobs').set({ leasedUntil: Date.now() - 1 }).where('id', '=', id).execute();
    expect(await jobs.runDueJobs()).toBe(1);
    expect(seen).toEqual([2]);
    expect(await jobRows()).toEqual([]);
  });

  it('a runner that lost its lease cannot delete or reschedule the job', async () => {
    const gate = deferred();
    const started = deferred();
    const slow = runner({
      work: async () => {
        started.resolve();
        await gate.promise;
      },
    });
    const fast = runner({ work: async () => retryJob(60_000, 'receiver down') });
    await enqueueJob(handle.db, { type: 'work', payload: null });
    const slowRun = slow.runDueJobs();
    await started.promise;
    await handle.db.updateTable('jobs').set({ leasedUntil: Date.now() - 1 }).execute();
    expect(await fast.runDueJobs()).toBe(1);
    gate.resolve();
    await slowRun;
    // The slow runner's "done" came too late: the job keeps the fast runner's reschedule.
    expect(await jobRows()).toMatchObject([{ attempts: 2, lastError: 'receiver down', leasedBy: null }]);
  });

  it('renews the lease of a long-running handler so no other runner takes it over', async () => {
    const gate = deferred();
    const started = deferred();
    const holder = runner(
      {
        long: async () => {
          started.resolve();
          await gate.promise;
        },
      },
      { leaseMs: 1500, pollIntervalMs: 50 },
    );
    let stolen = 0;
    const other = runner({ long: async () => void stolen++ });
    await enqueueJob(handle.db, { type: 'long', payload: null });
    holder.start();
    await started.promise;
    const until = Date.now() + 2600;
    while (Date.now() < until) {
      await other.runDueJobs();
      await sleep(100);
    }
    expect(stolen).toBe(0);
    const [row] = await jobRows();
    expect(row!.leasedUntil).toBeGreaterThan(Date.now());
    gate.resolve();
    await holder.stop();
    expect(await jobRows()).toEqual([]);
  });
  it('holds a claim for one minute by default, so the work of a process killed mid-job is taken up again within a minute', async () => {
    const gate = deferred();
    const started = deferred();
    const holder = runner({
      long: async () => {
        started.resolve();
        await gate.promise;
      },
    });
    await enqueueJob(handle.db, { type: 'long', payload: null });
    const before = Date.now();
    const running = holder.runDueJobs();
    await started.promise;
    const [row] = await jobRows();
    expect(row!.leasedUntil! - before).toBeGreaterThanOrEqual(60_000);
    expect(row!.leasedUntil! - Date.now()).toBeLessThanOrEqual(60_000);
    gate.resolve();
    await running;
  });
});

describe('a job whose lease ran out while its own process still runs it', () => {
  it('is not claimed again by that process (a process stopped for longer than the lease, then resumed)', async () => {
    const gate = deferred();
    let runs = 0;
    const jobs = runner(
      {
        long: async () => {
          runs += 1;
          await gate.promise;
        },
      },
      { pollIntervalMs: 50 },
    );
    await enqueueJob(handle.db, { type: 'long', payload: null });
    jobs.start();
    await waitFor(() => runs === 1);
    // Its lease lapsed while the process stood still (no renewal came in time); the process polls on.
    await handle.db.updateTable('jobs').set({ leasedUntil: Date.now() - 1 }).execute();
    await sleep(500);
    expect(runs).toBe(1);
    // Another process may take it over, as after a crash: at least once.
    let elsewhere = 0;
    const other = runner({ long: async () => void (elsewhere += 1) });
    expect(await other.runDueJobs()).toBe(1);
    expect(elsewhere).toBe(1);
    gate.resolve();
  });
});

describe('JobRunner loop', () => {
  it('wake() starts a job at once; stop() waits for running handlers', async () => {
    const gate = deferred();
    const started = deferred();
    let finished = false;
    const jobs = runner(
      {
        task: async () => {
          started.resolve();
          await gate.promise;
          finished = true;
        },
      },
      { pollIntervalMs: 60_000 },
    );
    jobs.start();
    await sleep(50);
    await enqueueJob(handle.db, { type: 'task', payload: null });
    jobs.wake();
    await started.promise;
    const stopping = jobs.stop();
    await sleep(50);
    expect(finished).toBe(false);
    gate.resolve();
    await stopping;
    expect(finished).toBe(true);
    expect(await jobRows()).toEqual([]);
  });

  it('polls for jobs enqueued by other processes', async () => {
    let runs = 0;
    const jobs = runner({ task: async () => void runs++ }, { pollIntervalMs: 50 });
    jobs.start();
    await enqueueJob(handle.db, { type: 'task', payload: null });
    await waitFor(() => runs === 1);
  });

  it('two runners on one database run every job exactly once', async () => {
    const second = openDatabase({ databaseUrl: null, dataDir });
    extraHandles.push(second);
    const counts = new Map<number, number>();
    const handler = async (job: ClaimedJob) => {
      const n = job.payload as number;
      counts.set(n, (counts.get(n) ?? 0) + 1);
      await sleep(Math.random() * 5);
    };
    const a = runner({ count: handler }, { pollIntervalMs: 10, concurrency: 3 });
    const b = runner({ count: handler }, { pollIntervalMs: 10, concurrency: 3 }, second);
    a.start();
    b.start();
    const total = 60;
    for (let n = 0; n < total; n++) await enqueueJob(n % 2 ? handle.db : second.db, { type: 'count', payload: n });
    await waitFor(async () => (await jobRows()).length === 0 && counts.size === total, 15_000);
    await a.stop();
    await b.stop();
    expect([...counts.values()].every((c) => c === 1)).toBe(true);
  });
});

describe('a finishing job starts the next', () => {
  it('runs a backlog larger than the slots without waiting for the next poll, in the shared pool and in slots of their own', async () => {
    // The poll after start comes in a minute: only finishing jobs can start the rest. (They once
    // did so only until a claim found every slot busy, after which the backlog went at a batch of
    // `concurrency` jobs per poll: 16 jobs a second, so a deleted account's bytes took hours.)
    const ran = { quick: 0, media: 0 };
    const jobs = runner(
      { quick: async () => void ran.quick++, media: async () => void ran.media++ },
      { concurrency: 3, pollIntervalMs: 60_000, typeConcurrency: { media: 1 } },
    );
    for (let n = 0; n < 40; n++) await enqueueJob(handle.db, { type: 'quick', payload: n });
    for (let n = 0; n < 10; n++) await enqueueJob(handle.db, { type: 'media', payload: n });
    jobs.start();
    await waitFor(async () => ran.quick === 40 && ran.media === 10 && (await jobRows()).length === 0, 20_000);
  });
});

describe('slow handlers', () => {
  it('runs every job, never more than `concurrency` at once, when handlers outlast the poll interval', async () => {
    let running = 0;
    let most = 0;
    const ran = new Set<number>();
    const jobs = runner(
      {
        slow: async (job) => {
          running++;
          most = Math.max(most, running);
          await sleep(60 + (job.payload as number) * 3);
          ran.add(job.payload as number);
          running--;
        },
      },
      { concurrency: 3, pollIntervalMs: 10 },
    );
    const total = 14;
    // Due before start, so the first polls claim several jobs in one statement (a batch).
    for (let n = 0; n < total; n++) await enqueueJob(handle.db, { type: 'slow', payload: n });
    jobs.start();
    await waitFor(async () => ran.size === total && (await jobRows()).length === 0);
    expect(most).toBeLessThanOrEqual(3);
    // Jobs enqueued after the runner was saturated (a poll found every slot busy) still run.
    for (let n = total; n < total + 4; n++) await enqueueJob(handle.db, { type: 'slow', payload: n });
    jobs.wake();
    await waitFor(async () => ran.size === total + 4 && (await jobRows()).length === 0);
    expect(most).toBeLessThanOrEqual(3);
  });

  it('runs types with slots of their own beside the shared slots: slow work neither waits behind nor blocks other jobs', async () => {
    const running = { media: 0, other: 0 };
    const most = { media: 0, other: 0 };
    const gate = deferred();
    let others = 0;
    const track = (kind: 'media' | 'other') => async () => {
      running[kind]++;
      most[kind] = Math.max(most[kind], running[kind]);
      if (kind === 'media') await gate.promise;
      else others++;
      running[kind]--;
    };
    const jobs = runner({ media: track('media'), other: track('other') }, { concurrency: 2, pollIntervalMs: 10, typeConcurrency: { media: 1 } });
    // Many slow media jobs first in the queue's order, then others.
    for (let n = 0; n < 5; n++) await enqueueJob(handle.db, { type: 'media', payload: n, runAt: Date.now() - 1000 });
    for (let n = 0; n < 6; n++) await enqueueJob(handle.db, { type: 'other', payload: n });
    jobs.start();
    // Every other job runs while the one media slot is held.
    await waitFor(() => others === 6);
    expect(running.media).toBe(1);
    gate.resolve();
    await waitFor(async () => (await jobRows()).length === 0);
    expect(most.media).toBe(1);
    expect(most.other).toBeLessThanOrEqual(2);
  });

  it('holds a gated type back in the background loop while its gate is shut, but not in runDueJobs', async () => {
    let open = false;
    const ran: string[] = [];
    const jobs = runner(
      { media: async () => void ran.push('media'), other: async () => void ran.push('other') },
      { pollIntervalMs: 10, typeConcurrency: { media: 1 }, typeGate: { media: () => open } },
    );
    await enqueueJob(handle.db, { type: 'media', payload: null });
    await enqueueJob(handle.db, { type: 'other', payload: null });
    jobs.start();
    await waitFor(() => ran.includes('other'));
    await sleep(100);
    expect(ran).toEqual(['other']);
    open = true;
    await waitFor(() => ran.includes('media'));
    await jobs.stop();
    // Tests and tools running every due job are not held back.
    open = false;
    await enqueueJob(handle.db, { type: 'media', payload: null });
    expect(await jobs.runDueJobs()).toBe(1);
    expect(ran).toEqual(['other', 'media', 'media']);
  });

  it('renews the lease of every running job of a claimed batch, also after another of them ended', async () => {
    const gate = deferred();
    const started = deferred();
    const jobs = runner(
      {
        quick: async () => undefined,
        long: async () => {
          started.resolve();
          await gate.promise;
        },
      },
      // Renewed every leaseMs / 3, at least every second.
      { concurrency: 2, leaseMs: 1500, pollIntervalMs: 60_000 },
    );
    await enqueueJob(handle.db, { type: 'quick', payload: null, runAt: Date.now() - 10 });
    const longId = await enqueueJob(handle.db, { type: 'long', payload: null });
    jobs.start();
    await started.promise;
    // The quick job of the same claim ended; the long one is the only row left.
    await waitFor(async () => (await jobRows()).length === 1);
    const [claimed] = await jobRows();
    expect(claimed).toMatchObject({ id: longId, attempts: 1 });
    await waitFor(async () => (await jobRows())[0]!.leasedUntil! > claimed!.leasedUntil!, 3000);
    gate.resolve();
    await jobs.stop();
    expect(await jobRows()).toEqual([]);
  });
});
