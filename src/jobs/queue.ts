/**
 * The durable job queue: every piece of background work (webhook deliveries, file expiry actions,
 * stale chunk-session sweeps, …) is a row of the `jobs` table, so it survives restarts and is shared
 * by every process on the same database.
 *
 * Enqueueing (usable inside the caller's transaction, so the job exists exactly when the caller's
 * change commits):
 *
 *   enqueueJob(executor: Executor, job: { type: string; payload: unknown; runAt?: number | Date;
 *              dedupeKey?: string | null }): Promise<string>            // the job's id
 *   addJobIfAbsent(executor: Executor, job: NewJob & { dedupeKey: string }): Promise<void>
 *                                        // adds the job unless its key exists (that job is left as is)
 *   cancelJob(executor: Executor, dedupeKey: string): Promise<boolean>  // true when one was deleted
 *   jobRunAt(executor: Executor, dedupeKey: string): Promise<number | null>
 *                                        // when the job with this key is due; null when there is none
 *   cancelUnclaimedJobs(executor: Executor, dedupeKeys: readonly string[]): Promise<number>
 *                                        // deletes those no runner holds; how many it deleted
 *   postponeUnclaimedJobs(executor: Executor, dedupeKeys: readonly string[], runAt: number,
 *                         payload?: unknown): Promise<void>   // moves those no runner holds; adds none
 *
 *   The two "unclaimed" forms are for a caller that must know whether the job has begun: a job a
 *   runner holds (its lease set, even if lapsed) or one already gone is left as it is, and a claim
 *   and these statements write the same row, so whichever comes second sees the other.
 *   - `payload` must be JSON-serialisable; the handler receives `JSON.parse(JSON.stringify(payload))`.
 *   - `runAt` (epoch ms or Date, default now): the job is not started before it.
 *   - `dedupeKey`: at most one job per key exists. Enqueueing an existing key REPLACES that job: its
 *     type, payload and runAt become the new ones, its attempt count and last error are reset, and its
 *     id and createdAt are kept (the returned id is the existing one). If the job is running at that
 *     moment, its lease is cleared too: the running attempt's result is discarded (it cannot delete or
 *     reschedule the replaced job), and the replaced job runs again when due — possibly while the old
 *     attempt is still finishing. "Latest enqueue wins, and runs at least once after the enqueue."
 *   - After the transaction commits, call `ctx.jobs.wake()` so this process starts the job at once;
 *     otherwise it starts at the next poll (every 500 ms) of some process.
 *
 * Running (one JobRunner per process, created and stopped by src/server.ts):
 *
 *   new JobRunner(ctx: { db: Db; dialect: Dialect; log: Logger }, handlers: JobHandlers,
 *                 options?: JobRunnerOptions)
 *   runner.start(): void                 // poll every pollIntervalMs (default 500) and on wake()
 *   runner.wake(): void                  // poll now (a no-op unless started)
 *   runner.stop(): Promise<void>         // stop polling; wait for running handlers to finish
 *   runner.runDueJobs(): Promise<number> // tests: run every job due now, wait for all, return count
 *
 *   Types named in `options.typeConcurrency` run in slots of their own (at most that many at once in
 *   this process), apart from the `concurrency` slots every other type shares: slow work such as
 *   thumbnails and text recognition neither waits behind nor holds up webhooks and expiry.
 *   `options.typeGate` may hold such a type back: the background loop claims it only while its gate
 *   says so (runDueJobs ignores gates).
 *
 *   type JobHandler = (job: ClaimedJob) => Promise<JobOutcome | void>;
 *   type JobHandlers = Record<string, JobHandler>;            // by job type
 *
 *   A handler's result decides what happens to the job:
 *   - returns nothing or `jobDone()`: the job is deleted;
 *   - returns `retryJob(delayMs, error)`: it runs again after delayMs (lastError records `error`);
 *   - returns `dropJob(error)`: it is deleted as failed for good (logged as a warning);
 *   - throws: it is retried with a default back-off (10 s doubling, at most 1 h, ±20 % jitter) until
 *     `maxAttemptsOnError` (default 10) attempts, then dropped. Use this for unexpected failures;
 *     return an outcome for the ones the handler understands.
 *
 * Guarantees:
 * - A runner claims due jobs by setting a lease (`leasedUntil`, `leasedBy` = a token unique to that
 *   claim of that job) and incrementing `attempts`, in one statement: `UPDATE … WHERE id IN
 *   (SELECT … FOR UPDATE SKIP LOCKED LIMIT n)` on PostgreSQL, one write transaction on SQLite. Two processes never claim
 *   the same attempt. Only types the runner has handlers for are claimed (rolling upgrades are safe).
 * - Each claimed job takes one of the `concurrency` slots until its own handler ends, also when it
 *   was claimed together with others; a poll that finds every slot busy claims nothing.
 * - While a handler runs, its lease (default 1 min) is renewed every third of it. A process killed
 *   mid-job stops renewing; once the lease expires, any process claims the job again (next attempt).
 *   The renewal, not the lease's length, is what keeps a long handler's job its own, so the lease is
 *   short: a webhook attempt cut off by a crash goes out again within a minute, not five.
 * - The job is deleted or rescheduled only by the claim that holds its lease (`WHERE leasedBy = …`),
 *   so a late finisher whose lease was lost changes nothing.
 * - Delivery is therefore AT LEAST ONCE: a process killed after a handler's side effect but before
 *   the job was deleted runs the job again. Handlers must be idempotent (check state first).
 * - Leases compare wall-clock times of different processes: keep the hosts' clocks in sync (NTP).
 */
import { hostname } from 'node:os';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import { isDatabaseFull, isDatabaseUnavailable, type Db, type Dialect } from '../db/database.ts';
import type { Executor } from '../db/account-scope.ts';
import { newId, randomLowerAlnum } from '../db/ids.ts';

export interface NewJob {
  type: string;
  /** JSON-serialisable. */
  payload: unknown;
  /** Epoch milliseconds or a Date; default now. */
  runAt?: number | Date | undefined;
  /** Idempotency key; see the replacement rules at the top of this file. */
  dedupeKey?: string | null | undefined;
}

function jobRow(job: NewJob) {
  const now = Date.now();
  const runAt = job.runAt === undefined ? now : typeof job.runAt === 'number' ? job.runAt : job.runAt.getTime();
  if (!Number.isFinite(runAt)) throw new Error(`enqueueJob: invalid runAt for a ${job.type} job`);
  const payload = JSON.stringify(job.payload ?? null);
  return { id: newId(), type: job.type, payload, runAt, attempts: 0, leasedUntil: null, leasedBy: null, lastError: null, createdAt: now, dedupeKey: job.dedupeKey ?? null };
}

/** Adds a job (or replaces the job with the same dedupeKey); returns the job's id. */
export async function enqueueJob(executor: Executor, job: NewJob): Promise<string> {
  const row = jobRow(job);
  const { payload, runAt } = row;
  if (row.dedupeKey === null) {
    await executor.insertInto('jobs').values(row).execute();
    return row.id;
  }
  const { id } = await executor
    .insertInto('jobs')
    .values(row)
    .onConflict((oc) => oc.column('dedupeKey').doUpdateSet({ type: row.type, payload, runAt, attempts: 0, leasedUntil: null, leasedBy: null, lastError: null }))
    .returning('id')
    .executeTakeFirstOrThrow();
  return id;
}

/**
 * enqueueJob for several jobs with dedupe keys, in one statement: each replaces the job with its
 * key, if any, as enqueueJob would.
 */
export async function enqueueJobs(executor: Executor, jobs: ReadonlyArray<NewJob & { dedupeKey: string }>): Promise<void> {
  if (jobs.length === 0) return;
  await executor
    .insertInto('jobs')
    .values(jobs.map(jobRow))
    .onConflict((oc) =>
      oc.column('dedupeKey').doUpdateSet((eb) => ({
        type: eb.ref('excluded.type'),
        payload: eb.ref('excluded.payload'),
        runAt: eb.ref('excluded.runAt'),
        attempts: 0,
        leasedUntil: null,
        leasedBy: null,
        lastError: null,
      })),
    )
    .execute();
}

/**
 * Adds a job unless one with the same dedupeKey exists, which is then left exactly as it is (a
 * running attempt keeps its lease). One plain insert: the cheapest way to add a job to a commit.
 */
export async function addJobIfAbsent(executor: Executor, job: NewJob & { dedupeKey: string }): Promise<void> {
  await executor
    .insertInto('jobs')
    .values(jobRow(job))
    .onConflict((oc) => oc.column('dedupeKey').doNothing())
    .execute();
}

/** Deletes the job with this dedupeKey, if any (a running attempt finishes but changes nothing). */
export async function cancelJob(executor: Executor, dedupeKey: string): Promise<boolean> {
  const result = await executor.deleteFrom('jobs').where('dedupeKey', '=', dedupeKey).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** cancelJob for several dedupe keys, in one statement. */
export async function cancelJobs(executor: Executor, dedupeKeys: readonly string[]): Promise<void> {
  if (dedupeKeys.length > 0) await executor.deleteFrom('jobs').where('dedupeKey', 'in', dedupeKeys).execute();
}

/** Deletes the jobs with these keys that no runner has claimed; answers how many it deleted. */
export async function cancelUnclaimedJobs(executor: Executor, dedupeKeys: readonly string[]): Promise<number> {
  if (dedupeKeys.length === 0) return 0;
  const result = await executor.deleteFrom('jobs').where('dedupeKey', 'in', dedupeKeys).where('leasedBy', 'is', null).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * Moves the jobs with these keys that no runner has claimed to `runAt` (and gives them `payload`,
 * when one is passed), unlike enqueueJob, which replaces a running job and adds a missing one.
 */
export async function postponeUnclaimedJobs(executor: Executor, dedupeKeys: readonly string[], runAt: number, payload?: unknown): Promise<void> {
  if (dedupeKeys.length === 0) return;
  await executor
    .updateTable('jobs')
    .set(payload === undefined ? { runAt } : { runAt, payload: JSON.stringify(payload) })
    .where('dedupeKey', 'in', dedupeKeys)
    .where('leasedBy', 'is', null)
    .execute();
}

/** When the job with this dedupeKey is due (epoch ms; in the past for one due or running); null when there is none. */
export async function jobRunAt(executor: Executor, dedupeKey: string): Promise<number | null> {
  const row = await executor.selectFrom('jobs').select('runAt').where('dedupeKey', '=', dedupeKey).executeTakeFirst();
  return row ? Number(row.runAt) : null;
}

export type JobOutcome = { outcome: 'done' } | { outcome: 'retry'; delayMs: number; error: string } | { outcome: 'drop'; error: string };

export const jobDone = (): JobOutcome => ({ outcome: 'done' });
export const retryJob = (delayMs: number, error: string): JobOutcome => ({ outcome: 'retry', delayMs: Math.max(0, Math.round(delayMs)), error });
export const dropJob = (error: string): JobOutcome => ({ outcome: 'drop', error });

/** What a handler is given. */
export interface ClaimedJob {
  id: string;
  type: string;
  payload: unknown;
  /** 1 for the first run of the job (since it was enqueued or last replaced). */
  attempt: number;
  /** The previous attempt's error, if it was retried. */
  lastError: string | null;
  runAt: number;
  createdAt: number;
  dedupeKey: string | null;
}

export type JobHandler = (job: ClaimedJob) => Promise<JobOutcome | void>;
export type JobHandlers = Record<string, JobHandler>;

export interface JobRunnerOptions {
  /** How often the queue is polled when not woken (default 500 ms). */
  pollIntervalMs?: number;
  /** Handlers running at once in this process (default 8). */
  concurrency?: number;
  /** How long a claim is valid without renewal (default 1 min). */
  leaseMs?: number;
  /** Attempts after which a job whose handler keeps throwing is dropped (default 10). */
  maxAttemptsOnError?: number;
  /** Job types with slots of their own, by type: at most this many of each run at once (≥ 1). */
  typeConcurrency?: Record<string, number>;
  /** For types with slots of their own: claimed by the background loop only while this returns true. */
  typeGate?: Record<string, () => boolean>;
}

export interface JobRunnerContext {
  db: Db;
  dialect: Dialect;
  log: Logger;
}

interface JobRow {
  id: string;
  type: string;
  payload: string;
  runAt: number;
  attempts: number;
  leasedUntil: number | null;
  leasedBy: string | null;
  lastError: string | null;
  createdAt: number;
  dedupeKey: string | null;
}

const jitter = (ms: number) => Math.round(ms * (0.8 + Math.random() * 0.4));
export const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));
/** The default back-off after a failed attempt (1, 2, …): 10 s doubling, at most 1 h, ±20 %. */
export const retryDelayMs = (attempt: number) => jitter(Math.min(3600_000, 10_000 * 2 ** Math.min(attempt - 1, 20)));

/** While the database cannot be used, how often the job queue says so. */
const UNAVAILABLE_LOG_INTERVAL_MS = 60_000;
/** The key of the shared slots among the groups of slots (a type is never named so). */
const SHARED_SLOTS = '*';

export class JobRunner {
  /** Identifies this runner in lease tokens (host, pid, random). */
  readonly id: string;
  private readonly db: Db;
  private readonly dialect: Dialect;
  private readonly log: Logger;
  private readonly handlers: JobHandlers;
  /** Types sharing the `concurrency` slots. */
  private readonly types: string[];
  /** Types with slots of their own, and how many. */
  private readonly ownSlots: Map<string, number>;
  private readonly gates: Record<string, () => boolean>;
  private readonly pollIntervalMs: number;
  private readonly concurrency: number;
  private readonly leaseMs: number;
  private readonly maxAttemptsOnError: number;

  private started = false;
  private stopping = false;
  private timer: NodeJS.Timeout | null = null;
  private timerDueAt = 0;
  private heartbeat: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  private again = false;
  /**
   * The groups of slots (SHARED_SLOTS, or a type with slots of its own) whose last claim filled every
   * free slot: more of their jobs may be due, and one of them finishing claims again at once. A
   * group with no free slot is not asked, and keeps what its last claim found.
   */
  private readonly saturatedGroups = new Set<string>();
  /** Running attempts by lease token (one per job). */
  private readonly running = new Map<string, { type: string; jobId: string; promise: Promise<void> }>();
  /** When claims began failing for want of the database, and when that was last logged. */
  private unavailableSince: number | null = null;
  private unavailableLoggedAt = 0;

  constructor(ctx: JobRunnerContext, handlers: JobHandlers, options: JobRunnerOptions = {}) {
    this.db = ctx.db;
    this.dialect = ctx.dialect;
    this.log = ctx.log;
    this.handlers = { ...handlers };
    this.ownSlots = new Map(Object.entries(options.typeConcurrency ?? {}).filter(([type]) => type in this.handlers).map(([type, n]) => [type, Math.max(1, n)]));
    this.types = Object.keys(this.handlers).filter((type) => !this.ownSlots.has(type));
    this.gates = { ...options.typeGate };
    this.pollIntervalMs = options.pollIntervalMs ?? 500;
    this.concurrency = Math.max(1, options.concurrency ?? 8);
    this.leaseMs = options.leaseMs ?? 60 * 1000;
    this.maxAttemptsOnError = options.maxAttemptsOnError ?? 10;
    this.id = `${hostname()}:${process.pid}:${randomLowerAlnum(6)}`;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.stopping = false;
    this.heartbeat = setInterval(() => void this.renewLeases(), Math.max(1000, Math.floor(this.leaseMs / 3)));
    this.heartbeat.unref();
    this.schedule(0);
  }

  /** Polls now instead of at the next interval (call after committing an enqueue). */
  wake(): void {
    if (this.started && !this.stopping) this.schedule(0);
  }

  /** Stops polling and waits for the handlers that are running. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.ticking;
    await this.allRunning();
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
    this.started = false;
  }

  /**
   * Runs every job due at the time of the call (also when the runner is not started) and waits for
   * them and for anything the background loop is running. Jobs rescheduled meanwhile are left for
   * later. Returns how many jobs this call ran.
   */
  async runDueJobs(): Promise<number> {
    const dueBy = Date.now();
    let count = 0;
    for (;;) {
      const { jobs } = await this.claimFree(dueBy, false);
      if (jobs.length === 0) break;
      count += jobs.length;
      await Promise.all(jobs.map((job) => this.launch(job)));
    }
    // A claim of the background loop may still be on its way: on PostgreSQL the claims above skip
    // the rows it holds locked, and it launches what it claimed only once its statement returns.
    await this.ticking;
    await this.allRunning();
    return count;
  }

  private async allRunning(): Promise<void> {
    await Promise.allSettled([...this.running.values()].map((r) => r.promise));
  }

  private groupOf(type: string): string {
    return this.ownSlots.has(type) ? type : SHARED_SLOTS;
  }

  /** Free slots: of the shared pool, and of each type with slots of its own (and open gate). */
  private freeSlots(gated: boolean): Array<{ key: string; types: string[]; free: number }> {
    const busy = new Map<string, number>();
    let shared = 0;
    for (const { type } of this.running.values()) {
      if (this.ownSlots.has(type)) busy.set(type, (busy.get(type) ?? 0) + 1);
      else shared += 1;
    }
    const groups = [{ key: SHARED_SLOTS, types: this.types, free: this.concurrency - shared }];
    for (const [type, slots] of this.ownSlots) {
      if (gated && this.gates[type] && !this.gates[type]()) continue;
      groups.push({ key: type, types: [type], free: slots - (busy.get(type) ?? 0) });
    }
    return groups.filter((g) => g.types.length > 0 && g.free > 0);
  }

  /** Claims due jobs for every free slot; `saturated` when some group's free slots were all filled. */
  private async claimFree(dueBy: number, gated: boolean): Promise<{ jobs: JobRow[]; saturated: boolean }> {
    const jobs: JobRow[] = [];
    let saturated = false;
    for (const group of this.freeSlots(gated)) {
      const claimed = await this.claim(group.types, group.free, dueBy);
      if (claimed.length === group.free) {
        saturated = true;
        this.saturatedGroups.add(group.key);
      } else {
        this.saturatedGroups.delete(group.key);
      }
      jobs.push(...claimed);
    }
    return { jobs, saturated };
  }

  private schedule(delayMs: number): void {
    if (this.stopping) return;
    const dueAt = Date.now() + delayMs;
    // A poll already due sooner stays: the next interval's poll, set when a tick ends, must not
    // put off one that a job finishing during that tick asked for now.
    if (this.timer && this.timerDueAt <= dueAt) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerDueAt = dueAt;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.tick();
    }, delayMs);
    // The HTTP server keeps a serving process alive; the queue alone should not (CLI, tests).
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    if (this.ticking) {
      this.again = true;
      return;
    }
    // Assigned before the loop runs and cleared only after it ended: the loop may end without
    // awaiting anything (every slot busy), and a flag cleared inside it would be set again here.
    const ticking = this.claimLoop();
    this.ticking = ticking;
    try {
      await ticking;
    } finally {
      this.ticking = null;
    }
    this.schedule(this.pollIntervalMs);
  }

  /** Claims due jobs for the free slots until none are left or nothing more is due. */
  private async claimLoop(): Promise<void> {
    try {
      do {
        this.again = false;
        if (this.stopping) break;
        const { jobs, saturated } = await this.claimFree(Date.now(), true);
        if (this.unavailableSince !== null) {
          this.log.info({ seconds: Math.round((Date.now() - this.unavailableSince) / 1000) }, 'job queue: the database is available again');
          this.unavailableSince = null;
          this.unavailableLoggedAt = 0;
        }
        for (const job of jobs) void this.launch(job);
        if (saturated) this.again = true;
      } while (this.again && !this.stopping);
    } catch (error) {
      if (this.stopping) return;
      const full = isDatabaseFull(error);
      if (!full && !isDatabaseUnavailable(error)) {
        this.log.error({ err: error }, 'job queue: could not claim jobs');
        return;
      }
      // PostgreSQL stopped or restarting, SQLite locked by another process, the database's disk
      // full (a claim writes its lease): every poll fails until it is over, which is said once a
      // minute rather than with a stack twice a second, into a log that may be on that full disk.
      const now = Date.now();
      this.unavailableSince ??= now;
      if (now - this.unavailableLoggedAt >= UNAVAILABLE_LOG_INTERVAL_MS) {
        this.unavailableLoggedAt = now;
        const said = full ? 'job queue: the database is out of space; jobs wait until it has room' : 'job queue: the database is unavailable; jobs wait until it is back';
        this.log.warn({ error: errorText(error), since: new Date(this.unavailableSince).toISOString() }, said);
      }
    }
  }

  /**
   * Leases up to `limit` due jobs to this runner in one statement. Each job gets its own token (the
   * claim's token and the job's id): a job's result, its slot and its lease renewal are its own, not
   * those of the whole claim.
   */
  private async claim(types: string[], limit: number, dueBy: number): Promise<JobRow[]> {
    if (types.length === 0 || limit <= 0) return [];
    const now = Date.now();
    const token = `${this.id}:${randomLowerAlnum(10)}:`;
    // Not a job this process is still running, whose lease ran out while the process stood still
    // (stopped, swapping, its renewals failing): run twice at once, two attempts each took the other's
    // result for a stale one, and a webhook delivery that reached its receiver stayed "pending" with
    // no job left to send it. Another process may take it over, as after a crash.
    const mine = [...this.running.values()].map((r) => r.jobId);
    const rows = await this.db
      .updateTable('jobs')
      .set((eb) => ({ attempts: eb('attempts', '+', 1), leasedUntil: now + this.leaseMs, leasedBy: sql<string>`${token} || ${eb.ref('id')}` }))
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('jobs')
          .select('id')
          .where('type', 'in', types)
          .where('runAt', '<=', Math.min(now, dueBy))
          .where((w) => w.or([w('leasedUntil', 'is', null), w('leasedUntil', '<=', now)]))
          .$if(mine.length > 0, (q) => q.where('id', 'not in', mine))
          .orderBy('runAt')
          .orderBy('id')
          .limit(limit)
          .$if(this.dialect === 'postgres', (q) => q.forUpdate().skipLocked()),
      )
      .returningAll()
      .execute();
    return rows as JobRow[];
  }

  private launch(row: JobRow): Promise<void> {
    const token = row.leasedBy!;
    const promise = this.execute(row).finally(() => {
      this.running.delete(token);
      // Per group: one flag for all once let a pass that found the shared slots busy, and nothing
      // more of another type due, stop finishing jobs from claiming, and a backlog went at one
      // batch of slots per poll (16 jobs a second).
      if (this.saturatedGroups.has(this.groupOf(row.type)) && this.started) this.schedule(0);
    });
    this.running.set(token, { type: row.type, jobId: row.id, promise });
    return promise;
  }

  private async execute(row: JobRow): Promise<void> {
    const handler = this.handlers[row.type]!;
    let outcome: JobOutcome;
    try {
      const job: ClaimedJob = {
        id: row.id,
        type: row.type,
        payload: JSON.parse(row.payload) as unknown,
        attempt: row.attempts,
        lastError: row.lastError,
        runAt: row.runAt,
        createdAt: row.createdAt,
        dedupeKey: row.dedupeKey,
      };
      outcome = (await handler(job)) ?? jobDone();
    } catch (error) {
      const message = errorText(error);
      if (row.attempts >= this.maxAttemptsOnError) {
        outcome = dropJob(`${message} (gave up after ${row.attempts} attempts)`);
      } else {
        outcome = retryJob(retryDelayMs(row.attempts), message);
        this.log.error({ err: error, jobId: row.id, jobType: row.type, attempt: row.attempts }, 'job failed; it will be retried');
      }
    }
    try {
      await this.finish(row, outcome);
    } catch (error) {
      // The lease runs out and another attempt happens: at least once.
      if (!this.stopping) this.log.error({ err: error, jobId: row.id, jobType: row.type }, 'job queue: could not record a job result');
    }
  }

  private async finish(row: JobRow, outcome: JobOutcome): Promise<void> {
    const token = row.leasedBy!;
    let changed: bigint;
    if (outcome.outcome === 'retry') {
      const result = await this.db
        .updateTable('jobs')
        .set({ runAt: Date.now() + outcome.delayMs, leasedUntil: null, leasedBy: null, lastError: outcome.error.slice(0, 2000) })
        .where('id', '=', row.id)
        .where('leasedBy', '=', token)
        .executeTakeFirst();
      changed = result.numUpdatedRows;
    } else {
      if (outcome.outcome === 'drop') this.log.warn({ jobId: row.id, jobType: row.type, attempt: row.attempts, error: outcome.error }, 'job dropped');
      const result = await this.db.deleteFrom('jobs').where('id', '=', row.id).where('leasedBy', '=', token).executeTakeFirst();
      changed = result.numDeletedRows;
    }
    if (Number(changed) === 0) this.log.debug({ jobId: row.id, jobType: row.type }, 'job lease lost or job replaced; result discarded');
  }

  private async renewLeases(): Promise<void> {
    if (this.running.size === 0) return;
    try {
      await this.db
        .updateTable('jobs')
        .set({ leasedUntil: Date.now() + this.leaseMs })
        .where('leasedBy', 'in', [...this.running.keys()])
        .execute();
    } catch (error) {
      this.log.warn({ err: error }, 'job queue: could not renew leases');
    }
  }
}
