import cluster from 'node:cluster';
import { ConfigError, loadConfig, loadDotEnv, type Config } from './config.ts';
import { createLogger, startServer, type RunningServer } from './server.ts';
import { releaseStartupMemory } from './memory.ts';
import { runWorkers } from './workers.ts';

let config;
try {
  loadDotEnv();
  config = loadConfig(process.env);
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(`hoard: invalid configuration: ${error.message}`);
    process.exit(1);
  }
  throw error;
}

try {
  if (config.workers > 1 && cluster.isPrimary) {
    await runWorkers(config, createLogger(config.logLevel));
  } else {
    await serve(config);
  }
} catch (error) {
  // Start-up failures (database unreachable, port in use) are operator problems: one clear line.
  const message = error instanceof Error ? error.message : String(error);
  console.error(`hoard: could not start: ${message}`);
  process.exit(1);
}

async function serve(config: Config) {
  // The handlers go in before the server starts: it answers as soon as it listens, while its start
  // still schedules its jobs, and a SIGTERM then would end the process without a shutdown.
  // A signal while it starts (a migration may wait minutes for a lock) stops it once started; a
  // second one stops it at once. So does a second one while it stops: the first waits for every
  // request in progress, and a slow client's upload kept an operator's Ctrl-C waiting for as long
  // as it took. What a request or a job had not committed is not kept (commits are atomic).
  let server: RunningServer | null = null;
  let stopping: string | null = null;
  const shutdown = (signal: string) => {
    if (stopping !== null) {
      // A worker (WORKERS > 1) gets every stop twice: from the terminal or the service manager, which
      // signal the whole group, and passed on by the primary. Only the primary stops them at once,
      // on a second signal of its own (src/workers.ts).
      if (server && cluster.isWorker) return;
      if (server) server.ctx.log.warn(`${signal} again: stopping at once, without waiting for the requests and background work in progress`);
      process.exit(1);
    }
    stopping = signal;
    if (server) stop(server, signal);
    else console.error(`hoard: ${signal} while starting: stopping once started (send it again to stop at once)`);
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  // Of several workers, the first forked says the start's advice; the others find the same.
  server = await startServer(config, undefined, { notices: !cluster.isWorker || cluster.worker?.id === 1 });
  releaseStartupMemory();
  // A signal that came while it started: it stops now.
  if (stopping !== null) stop(server, stopping);
}

function stop(server: RunningServer, signal: string) {
  server.ctx.log.info({ signal }, 'shutting down');
  // The last line says whether every request was finished and everything closed.
  server.close().then(
    () => {
      server.ctx.log.info('stopped');
      process.exit(0);
    },
    (error: unknown) => {
      server.ctx.log.error({ err: error }, 'stopped, but shutting down failed');
      process.exit(1);
    },
  );
}
