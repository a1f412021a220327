import { existsSync } from 'node:fs';
import { ConfigError, loadConfig } from './config.ts';
import { startServer } from './server.ts';
import { releaseStartupMemory } from './memory.ts';

if (existsSync('.env')) process.loadEnvFile('.env');

let config;
try {
  config = loadConfig(process.env);
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(`hoard: invalid configuration: ${error.message}`);
    process.exit(1);
  }
  throw error;
}

try {
  const server = await startServer(config);
  releaseStartupMemory();
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    server.ctx.log.info({ signal }, 'shutting down');
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
} catch (error) {
  // Start-up failures (database unreachable, port in use) are operator problems: one clear line.
  const message = error instanceof Error ? error.message : String(error);
  console.error(`hoard: could not start: ${message}`);
  process.exit(1);
}
