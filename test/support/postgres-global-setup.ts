import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { migrate } from '../../src/db/migrator.ts';
import { openDatabase } from '../../src/db/database.ts';
import { MIGRATED_TEMPLATE, startPostgres } from './postgres.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const cluster = await startPostgres();
  await migratedTemplate(cluster.url);
  project.provide('postgresUrl', cluster.url);
  return () => cluster.stop();
}

/**
 * A database with every migration applied, which a test server's database is copied from
 * (`migratedDatabase`): a start then finds nothing to apply, about a second less for each of the
 * hundreds of servers the PostgreSQL project starts. The migrations themselves are tested from an
 * empty database (test/http/migrations.test.ts) and applied once here, by the same migrator.
 */
async function migratedTemplate(adminUrl: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${MIGRATED_TEMPLATE}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${MIGRATED_TEMPLATE}`;
  const handle = openDatabase({ databaseUrl: url.toString(), dataDir: '/nonexistent' });
  try {
    await migrate(handle.db);
  } finally {
    await handle.close();
  }
}
