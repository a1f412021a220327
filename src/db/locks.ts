import { sql, type Transaction } from 'kysely';
import type { Database } from './schema.ts';
import type { Dialect } from './database.ts';

/**
 * Serialises read-check-write sequences on one account (token limit, quota, name allocation).
 * PostgreSQL takes a row lock on the account until the transaction ends; SQLite already runs one
 * write transaction at a time.
 */
export async function lockAccountRow(trx: Transaction<Database>, dialect: Dialect, userId: string): Promise<void> {
  if (dialect === 'postgres') await sql`select 1 from ${sql.table('users')} where ${sql.ref('id')} = ${userId} for update`.execute(trx);
}
