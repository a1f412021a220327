import cluster from 'node:cluster';
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { openDatabase } from './db/database.ts';
import { openSecretBox } from './secret-key-check.ts';
import { prepareDatabase } from './server.ts';
import { ensureDataDir } from './data-dir.ts';

/** A worker that dies this often within a minute (per configured worker) is not restarted again. */
const RESTARTS_PER_MINUTE = 5;
/** How long the workers get to finish their requests after SIGTERM before the primary gives up. */
const SHUTDOWN_DEADLINE_MS = 30_000;

/**
 * WORKERS > 1 (README, "Several processes"): this process becomes the primary of a node:cluster
 * and serves nothing itself. Each worker is a whole Hoard server (`startServer`) on the shared port;
 * the primary hands connections out in turn. Nothing is shared in memory: background jobs are
 * claimed from the job table with leases, as by processes on several machines, and the upload-start
 * limit counts per process as the specification defines it.
 *
 * - The database is migrated, and the secret key made, once before any worker starts.
 * - At the start, a worker that fails to start (exits before it listens: port in use, database
 *   unreachable) stops them all: each would fail the same way. Once every worker has listened, a
 *   worker that dies, is killed, or is a replacement that could not start (the database locked by
 *   another program for a while, say) is replaced, unless they keep dying: the workers still
 *   serving must not be stopped over a passing fault.
 * - SIGTERM or SIGINT is passed on; each worker finishes its requests, then the primary exits.
 *   Should the primary be killed outright, the workers exit too (node:cluster ends a worker whose
 *   channel to the primary closes).
 */
export async function runWorkers(config: Config, log: Logger): Promise<void> {
  ensureDataDir(config.dataDir);
  fs.mkdirSync(path.join(config.dataDir, 'tmp'), { recursive: true });
  const database = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 1, log });
  try {
    await prepareDatabase(database.db, config, log);
    // Made here (when SECRET_KEY is unset) so that every worker reads the same key file.
    await openSecretBox(database.db, config);
  } finally {
    await database.close();
  }

  const serving = new Set<number>();
  // Whether every worker has listened once: from then on the server is running, and is kept so.
  let started = false;
  const exits: number[] = [];
  let stopping = false;
  let exitCode = 0;
  const alive = () => Object.values(cluster.workers ?? {}).filter((w) => w && !w.isDead());

  const stop = (code: number) => {
    exitCode = Math.max(exitCode, code);
    if (stopping) return;
    stopping = true;
    for (const worker of alive()) worker!.process.kill('SIGTERM');
    if (alive().length === 0) process.exit(exitCode);
    setTimeout(() => {
      log.error('workers did not stop in time');
      for (const worker of alive()) worker!.process.kill('SIGKILL');
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS).unref();
  };

  cluster.on('listening', (worker, address) => {
    serving.add(worker.id);
    if (!started && serving.size === config.workers) {
      started = true;
      log.info({ workers: config.workers, port: address.port }, 'all workers listening');
    }
  });
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (alive().length === 0) process.exit(exitCode);
      return;
    }
    // At the start, a worker that exits on its own before it listens could not start (port in use,
    // database unreachable), and every other would fail the same way. One ended by a signal (killed
    // from outside) is replaced like any other, within the limit below, and so is a replacement
    // that could not start once the server runs.
    if (!started && !serving.has(worker.id) && signal === null) {
      log.error({ workerPid: worker.process.pid, code, signal }, 'a worker could not start; stopping');
      stop(1);
      return;
    }
    serving.delete(worker.id);
    const now = Date.now();
    exits.push(now);
    while (exits[0]! < now - 60_000) exits.shift();
    if (exits.length > RESTARTS_PER_MINUTE * config.workers) {
      log.error({ workerPid: worker.process.pid, code, signal }, 'workers keep exiting; stopping');
      stop(1);
      return;
    }
    // workerPid, not pid: the primary's own log lines carry its pid already.
    log.warn({ workerPid: worker.process.pid, code, signal }, 'a worker exited; starting another');
    setTimeout(() => {
      if (!stopping) cluster.fork();
    }, 1000).unref();
  });
  // A second signal while the workers finish their requests stops them at once; the first is passed
  // on, and each worker waits for its requests (a worker gets it from its group's signal too).
  const onSignal = (signal: string) => {
    if (!stopping) return stop(0);
    log.warn(`${signal} again: stopping at once, without waiting for the requests and background work in progress`);
    for (const worker of alive()) worker!.process.kill('SIGKILL');
    process.exit(1);
  };
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  for (let i = 0; i < config.workers; i++) cluster.fork();
}
