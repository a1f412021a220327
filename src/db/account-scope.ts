import { sql } from 'kysely';
import type { DeleteQueryBuilder, DeleteResult, InsertObject, InsertQueryBuilder, InsertResult, Kysely, SelectQueryBuilder, Transaction, UpdateQueryBuilder, UpdateResult } from 'kysely';
import type { Database } from './schema.ts';

export type Executor = Kysely<Database> | Transaction<Database>;

/** Tables whose rows belong to one account through a `userId` column. */
export type AccountOwnedTable = {
  [K in keyof Database]: Database[K] extends { userId: string } ? K : never;
}[keyof Database];

export interface ScopeOptions {
  /**
   * SQLite only: the account condition is checked on each row but not offered to the query planner
   * as an index to walk, for queries that find their rows another way (by rowid, through the search
   * index). Without statistics, SQLite takes any `userId = ?` for a handful of rows and would walk
   * the whole account instead (src/listing/file-query.ts).
   */
  notByOwnerIndex?: boolean;
}

/**
 * The one way account-owned rows are read and written: every query built here is already limited to
 * the account, so a handler cannot forget the condition or pass another account's ID through.
 */
export function forAccount(db: Executor, userId: string, options: ScopeOptions = {}) {
  // Kysely cannot type a column reference built from a generic table name; the public signatures
  // below restore precise types.
  const anyDb = db as Kysely<any>;
  // SQLite's unary `+` keeps the column's value but hides it from index selection.
  const owner = (table: string) => (options.notByOwnerIndex ? sql`+${sql.ref(`${table}.userId`)}` : `${table}.userId`);
  return {
    userId,
    selectFrom<T extends AccountOwnedTable>(table: T): SelectQueryBuilder<Database, T, {}> {
      return anyDb.selectFrom(table as string).where(owner(table) as string, '=', userId) as any;
    },
    updateTable<T extends AccountOwnedTable>(table: T): UpdateQueryBuilder<Database, T, T, UpdateResult> {
      return anyDb.updateTable(table as string).where(owner(table) as string, '=', userId) as any;
    },
    deleteFrom<T extends AccountOwnedTable>(table: T): DeleteQueryBuilder<Database, T, DeleteResult> {
      return anyDb.deleteFrom(table as string).where(owner(table) as string, '=', userId) as any;
    },
    /**
     * SQLite: the account's range of document numbers in the search index, as SQL expressions
     * (migration 0020-search-documents): every file of the account, and no other, is numbered in it.
     */
    documentRange() {
      const first = sql<number>`(select ${sql.ref('users.accountNo')} * 4294967296 from ${sql.table('users')} where ${sql.ref('users.id')} = ${userId})`;
      return { first, last: sql<number>`(${first} + 4294967295)` };
    },
    insertInto<T extends AccountOwnedTable>(
      table: T,
      values: Omit<InsertObject<Database, T>, 'userId'> | Omit<InsertObject<Database, T>, 'userId'>[],
    ): InsertQueryBuilder<Database, T, InsertResult> {
      const rows = (Array.isArray(values) ? values : [values]).map((v) => ({ ...v, userId }));
      return anyDb.insertInto(table as string).values(rows) as any;
    },
  };
}

export type AccountScope = ReturnType<typeof forAccount>;
