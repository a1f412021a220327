import cluster from 'node:cluster';
import { ConfigError, loadConfig, loadDotEnv, type Config } from './config.ts';
import { createLogger, startServer } from './server.ts';
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
  const server = await startServer(config);
  releaseStartupMemory();
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
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
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}
