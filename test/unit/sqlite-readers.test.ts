import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, SQLITE_MMAP_BYTES, type DatabaseHandle } from '../../src/db/database.ts';
import { SqliteReaders } from '../../src/db/sqlite-readers.ts';

// Reads that may scan run on SQLite readers in threads of their own (src/db/sqlite-readers.ts,
// docs/decisions.md "Reads that may scan"): such a statement must hold none of the process's
// other work, and must read what the server's own connection has committed.

let handle: DatabaseHandle | null = null;
afterEach(async () => {
  await handle?.close();
  handle = null;
});

function open(): DatabaseHandle {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-sqlite-readers-'));
  handle = openDatabase({ databaseUrl: null, dataDir: dir });
  return handle;
}

/** A read that keeps SQLite busy for a while without any data: counting to `n`. */
const longCount = (n: number) => sql<{ n: number }>`with recursive c(x) as (select 1 union all select x + 1 from c where x < ${n}) select count(*) as n from c`;

describe('SQLite readers', () => {
  it('run a long statement without holding the process or its own connection', async () => {
    const { db, reader } = open();
    await sql`create table scratch (value integer not null)`.execute(db);
    let ticks = 0;
    let longestGap = 0;
    let last = performance.now();
    const timer = setInterval(() => {
      const now = performance.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
      ticks++;
    }, 2);
    const started = performance.now();
    let finishedAt = 0;
    const long = longCount(3_000_000)
      .execute(reader)
      .then((result) => {
        finishedAt = performance.now();
        return result;
      });
    // Meanwhile the server's connection writes and reads, and timers fire.
    const written: number[] = [];
    while (finishedAt === 0) {
      await sql`insert into scratch (value) values (${written.length})`.execute(db);
      written.push((await sql<{ n: number }>`select count(*) as n from scratch`.execute(db)).rows[0]!.n);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const { rows } = await long;
    clearInterval(timer);
    const took = finishedAt - started;
    expect(rows[0]!.n).toBe(3_000_000);
    // The statement took long enough for the comparison to mean something.
    expect(took).toBeGreaterThan(100);
    expect(written.length).toBeGreaterThan(3);
    expect(written).toEqual(written.map((_, i) => i + 1));
    expect(ticks).toBeGreaterThan(3);
    expect(longestGap).toBeLessThan(took / 2);
  });

  it('read what the server\'s connection committed, at once', async () => {
    const { db, reader } = open();
    await sql`create table scratch (value integer not null)`.execute(db);
    for (let i = 1; i <= 20; i++) {
      await sql`insert into scratch (value) values (${i})`.execute(db);
      const { rows } = await sql<{ n: number; total: number }>`select count(*) as n, sum(value) as total from scratch`.execute(reader);
      expect(rows[0]).toEqual({ n: i, total: (i * (i + 1)) / 2 });
    }
  });

  it('do not see what an open transaction of the server\'s connection has not committed', async () => {
    const { db, reader } = open();
    await sql`create table scratch (value integer not null)`.execute(db);
    await db.transaction().execute(async (trx) => {
      await sql`insert into scratch (value) values (1)`.execute(trx);
      const { rows } = await sql<{ n: number }>`select count(*) as n from scratch`.execute(reader);
      expect(rows[0]!.n).toBe(0);
    });
    const { rows } = await sql<{ n: number }>`select count(*) as n from scratch`.execute(reader);
    expect(rows[0]!.n).toBe(1);
  });

  it('refuse writes and transactions, and report SQLite\'s errors with their codes', async () => {
    const { db, reader } = open();
    await sql`create table scratch (value integer not null)`.execute(db);
    await expect(sql`insert into scratch (value) values (1)`.execute(reader)).rejects.toThrow(/only statements that return rows/);
    await expect(sql`insert into scratch (value) values (1) returning value`.execute(reader)).rejects.toMatchObject({ code: expect.stringMatching(/^SQLITE_READONLY/) });
    await expect(reader.transaction().execute(async () => 1)).rejects.toThrow(/no transactions/);
    await expect(sql`select * from missing`.execute(reader)).rejects.toMatchObject({ code: 'SQLITE_ERROR', message: expect.stringContaining('no such table: missing') });
    expect((await sql<{ n: number }>`select count(*) as n from scratch`.execute(db)).rows[0]!.n).toBe(0);
    // Still serving after errors.
    expect((await sql<{ one: number }>`select 1 as one`.execute(reader)).rows).toEqual([{ one: 1 }]);
  });

  it('read with the settings of the server\'s connection, and a short statement need not wait for a long one', async () => {
    const { reader } = open();
    const settings = await sql<{ mmap_size: number }>`pragma mmap_size`.execute(reader);
    expect(settings.rows[0]!.mmap_size).toBe(SQLITE_MMAP_BYTES);
    // Both readers started.
    await Promise.all([longCount(100_000).execute(reader), longCount(100_000).execute(reader)]);
    const order: string[] = [];
    await Promise.all([
      longCount(3_000_000).execute(reader).then(() => order.push('long')),
      sql`select 1 as one`.execute(reader).then(() => order.push('short')),
    ]);
    expect(order).toEqual(['short', 'long']);
  });

  it('stop when idle, and the next statement starts another', async () => {
    const { db } = open();
    await sql`create table scratch (value integer not null)`.execute(db);
    await sql`insert into scratch (value) values (7)`.execute(db);
    const readers = new SqliteReaders(await databaseFile(db), 2, 100);
    try {
      expect(readers.running).toBe(0);
      expect(await readers.run('select value from scratch', [])).toEqual([{ value: 7 }]);
      expect(readers.running).toBe(1);
      // Busy readers do not stop, however long the statement.
      const long = readers.run('with recursive c(x) as (select 1 union all select x + 1 from c where x < 2000000) select count(*) as n from c', []);
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(readers.running).toBeGreaterThan(0);
      expect(await long).toEqual([{ n: 2_000_000 }]);
      for (let waited = 0; readers.running > 0 && waited < 5000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(readers.running).toBe(0);
      expect(await readers.run('select value + 1 as value from scratch', [])).toEqual([{ value: 8 }]);
      expect(readers.running).toBe(1);
    } finally {
      await readers.close();
    }
  });
});

/** The file a SQLite Kysely instance has open. */
async function databaseFile(db: DatabaseHandle['db']): Promise<string> {
  const { rows } = await sql<{ file: string }>`select file from pragma_database_list where name = 'main'`.execute(db);
  return rows[0]!.file;
}
