import { sql, type Kysely } from 'kysely';
import { openDatabase } from '../../src/db/database.ts';
import { applyMigrations, migrations } from '../../src/db/migrator.ts';

/**
 * A process that applies the migrations and one more, `9999-interrupted`, that creates a table, fills
 * it, says "inside" on its standard output and then waits, for a test to kill it right there:
 * `node test/support/interrupted-migration.ts <dataDir> [databaseUrl]`. With HOLD_MS it waits that
 * long instead and then completes: a long upgrade another process meets.
 */
const [dataDir, databaseUrl] = process.argv.slice(2);
const handle = openDatabase({ databaseUrl: databaseUrl ?? null, dataDir: dataDir! });
const interrupted = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.createTable('interruptedMigration').addColumn('n', 'integer').execute();
    await sql`insert into ${sql.table('interruptedMigration')} (n) values (1), (2), (3)`.execute(db);
    process.stdout.write('inside\n');
    const hold = process.env.HOLD_MS;
    await new Promise((resolve) => hold !== undefined && setTimeout(resolve, Number(hold)));
  },
};
await applyMigrations(handle.db, { ...migrations, '9999-interrupted': interrupted });
await handle.close();
