import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { dialectUnderTest, freshDatabaseUrl, startTestServer, type TestServer } from '../support/server.ts';
import { openDatabase, prepared, withoutJit } from '../../src/db/database.ts';
import { signUp } from '../support/client.ts';

// The database layer's performance measures must not change what a query means.

let server: TestServer;
let userId: string;

beforeAll(async () => {
  server = await startTestServer();
  userId = (await signUp(server.baseUrl)).userId;
});
afterAll(() => server.close());

describe('database layer', () => {
  it('compares parameters exactly as before, joins and LIMIT included (SQLite writes them +?)', async () => {
    const { db } = server.ctx;
    const user = await db.selectFrom('users').select(['id', 'createdAt']).where('id', '=', userId).executeTakeFirstOrThrow();
    // A numeric text compared with an integer column: the column's affinity (SQLite) or type (PostgreSQL) applies.
    const byText = await db.selectFrom('users').select('id').where('createdAt', '=', String(user.createdAt) as unknown as number).execute();
    expect(byText.map((r) => r.id)).toEqual([userId]);
    // A join with parameters, and a LIMIT from a parameter, rebound with new values on each run.
    for (const limit of [1, 2, 1]) {
      const rows = await db
        .selectFrom('users')
        .innerJoin('userRoles', 'userRoles.userId', 'users.id')
        .innerJoin('roles', 'roles.id', 'userRoles.roleId')
        .select(['users.id', 'roles.systemKey'])
        .where('users.id', '=', userId)
        .limit(limit)
        .execute();
      expect(rows).toEqual([{ id: userId, systemKey: 'administrator' }].slice(0, limit));
    }
    const none = await db.selectFrom('users').innerJoin('userRoles', 'userRoles.userId', 'users.id').select('users.id').where('users.id', '=', 'nobody').execute();
    expect(none).toEqual([]);
  });

  it('runs every marked (prepared) statement; a PostgreSQL connection keeps at most 200 of them prepared', async () => {
    const databaseUrl = (dialectUnderTest === 'postgres' ? await freshDatabaseUrl() : null) ?? null;
    const handle = openDatabase({ databaseUrl, dataDir: server.dataDir, poolSize: 1 });
    try {
      for (let i = 0; i < 250; i++) {
        const row = await sql<{ n: number }>`select ${sql.lit(i)} + ${1} as n ${prepared}`.execute(handle.db);
        expect(Number(row.rows[0]!.n)).toBe(i + 1);
      }
      if (handle.dialect === 'postgres') {
        const kept = await sql<{ n: string }>`select count(*) as n from pg_prepared_statements`.execute(handle.db);
        expect(Number(kept.rows[0]!.n)).toBe(200);
      }
    } finally {
      await handle.close();
    }
  });

  it('opens PostgreSQL sessions with the JIT compiler off, keeping options the URL gives', async () => {
    if (dialectUnderTest !== 'postgres') {
      // SQLite has no such setting: the URL helper still composes options for a PostgreSQL URL.
      expect(new URL(withoutJit('postgres://u@h:5432/d?options=-c%20search_path%3Dx')).searchParams.get('options')).toBe('-c search_path=x -c jit=off');
      return;
    }
    const base = new URL((await freshDatabaseUrl())!);
    base.searchParams.set('options', '-c statement_timeout=12345');
    const handle = openDatabase({ databaseUrl: base.toString(), dataDir: server.dataDir, poolSize: 1 });
    try {
      const jit = await sql<{ jit: string }>`show jit`.execute(handle.db);
      expect(jit.rows[0]!.jit).toBe('off');
      const timeout = await sql<{ statement_timeout: string }>`show statement_timeout`.execute(handle.db);
      expect(timeout.rows[0]!.statement_timeout).toBe('12345ms');
    } finally {
      await handle.close();
    }
  });
});
