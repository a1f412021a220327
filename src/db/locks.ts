import { sql, type Transaction, type UpdateQueryBuilder } from 'kysely';
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

/**
 * For an update of one file outside a transaction that holds its account's lock: on PostgreSQL the
 * statement locks the owner's row first, in its sub-select, and only then the file's row. The count
 * triggers lock the owner's row after the file's, while renames, deletions and folder changes hold
 * the owner's row and then wait for the file's: taken in both orders, the two deadlocked, and either
 * side could be the one PostgreSQL aborted (docs/decisions.md, "One lock order on PostgreSQL").
 */
export function ownerLockedFirst(dialect: Dialect, fileId: string) {
  return <QB extends UpdateQueryBuilder<Database, 'files', 'files', any>>(query: QB): QB => {
    if (dialect !== 'postgres') return query;
    return query.where('userId', 'in', (eb) =>
      eb
        .selectFrom('users')
        .select('users.id')
        .where('users.id', '=', (inner) => inner.selectFrom('files as owned').select('owned.userId').where('owned.id', '=', fileId))
        .forUpdate(),
    ) as QB;
  };
}
