import { createDatabase, freePort, MIGRATED_TEMPLATE } from './postgres.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inject } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createLogger, startServer, type RunningServer } from '../../src/server.ts';


export { freePort };

export const dialectUnderTest: 'sqlite' | 'postgres' = inject('postgresUrl') ? 'postgres' : 'sqlite';

/** A fresh, empty database for one test server: a new database in the cluster, or a new SQLite file. */
export async function freshDatabaseUrl(): Promise<string | undefined> {
  const adminUrl = inject('postgresUrl');
  if (!adminUrl) return undefined;
  return createDatabase(adminUrl);
}

/**
 * The same with every migration applied already, for a server under test: its start has nothing to
 * apply. On SQLite, as `freshDatabaseUrl`: a new file costs its start little.
 */
export async function migratedDatabaseUrl(): Promise<string | undefined> {
  const adminUrl = inject('postgresUrl');
  if (!adminUrl) return undefined;
  return createDatabase(adminUrl, 'hoard', MIGRATED_TEMPLATE);
}

export interface TestServer extends RunningServer {
  baseUrl: string;
  dataDir: string;
  databaseUrl: string | undefined;
  env: Record<string, string>;
}

/**
 * A real server listening on a loopback port, configured through the same environment variables as
 * production. Pass `databaseUrl`/`dataDir` to share them with another server (several processes).
 */
export async function startTestServer(
  env: Record<string, string> = {},
  shared?: { databaseUrl?: string | undefined; dataDir?: string },
  /** Every line the server logs (at LOG_LEVEL, else info), parsed, instead of none. */
  logged?: Array<{ level: number; msg?: string; [field: string]: unknown }>,
): Promise<TestServer> {
  const port = await freePort();
  const dataDir = shared?.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-test-'));
  const databaseUrl = shared ? shared.databaseUrl : await migratedDatabaseUrl();
  const fullEnv: Record<string, string> = {
    PORT: String(port),
    HOST: '127.0.0.1',
    BASE_URL: `http://127.0.0.1:${port}`,
    DATA_DIR: dataDir,
    LOG_LEVEL: process.env.HOARD_TEST_LOG ?? (logged ? 'info' : 'silent'),
    // Every JSON answer is checked against its route's response schema (src/http/responses.ts).
    CHECK_RESPONSES: 'true',
    // Thumbnails and text recognition run only where a test asks for them (test/http/media*.test.ts):
    // elsewhere the jobs wait, and background work never changes what another test looks at.
    THUMBNAIL_CONCURRENCY: '0',
    OCR_CONCURRENCY: '0',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    ...env,
  };
  const config = loadConfig(fullEnv);
  const server = await startServer(config, createLogger(config.logLevel, logged && { write: (line: string) => void logged.push(JSON.parse(line)) }));
  return { ...server, baseUrl: config.baseUrl, dataDir, databaseUrl, env: fullEnv };
}
