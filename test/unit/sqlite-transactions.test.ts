import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { sql } from 'kysely';
import SqliteDatabase from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, SQLITE_MMAP_BYTES, type DatabaseHandle } from '../../src/db/database.ts';

// Several server processes on one SQLite file (WORKERS): a transaction that reads and then writes
// must wait for another process's write, not fail because that write moved the database on under
// its snapshot (src/db/database.ts, transactions begin IMMEDIATE).

let handle: DatabaseHandle | null = null;
afterEach(async () => {
  await handle?.close();
  handle = null;
});

/** Another connection, in a thread of its own (as another process would be), inserting `value`. */
function writeElsewhere(file: string, value: number): Promise<void> {
  const source = `
    const { workerData, parentPort } = require('node:worker_threads');
    const Database = require(workerData.module);
    const db = new Database(workerData.file);
    db.pragma('busy_timeout = 5000');
    db.prepare('insert into scratch (value) values (?)').run(workerData.value);
    db.close();
    parentPort.postMessage('done');`;
  const worker = new Worker(source, { eval: true, workerData: { file, value, module: path.resolve('node_modules/better-sqlite3') } });
  return new Promise((resolve, reject) => {
    worker.once('message', () => resolve());
    worker.once('error', reject);
  });
}

describe('SQLite transactions', () => {
  it('a transaction that reads and then writes waits for a write made meanwhile elsewhere', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-sqlite-tx-'));
    handle = openDatabase({ databaseUrl: null, dataDir: dir });
    await sql`create table scratch (value integer not null)`.execute(handle.db);
    let elsewhere: Promise<void> | null = null;
    await handle.db.transaction().execute(async (trx) => {
      const before = await sql<{ n: number }>`select count(*) as n from scratch`.execute(trx);
      expect(before.rows[0]!.n).toBe(0);
      elsewhere = writeElsewhere(path.join(dir, 'hoard.sqlite'), 2);
      // Time for the other connection to write, were it let through.
      await new Promise((resolve) => setTimeout(resolve, 300));
      await sql`insert into scratch (value) values (1)`.execute(trx);
    });
    await elsewhere;
    const rows = await sql<{ value: number }>`select value from scratch order by rowid`.execute(handle.db);
    // This transaction held the write lock from its start: the other write came after it.
    expect(rows.rows.map((r) => r.value)).toEqual([1, 2]);
  });

  it('keeps temporary storage, statement journals included, in memory', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-sqlite-tx-'));
    handle = openDatabase({ databaseUrl: null, dataDir: dir });
    // 2 = MEMORY: a transaction's writes to files (triggers, about 20 index pages) are not journaled
    // to a temporary file a second time (docs/decisions.md, "SQLite settings").
    const { rows } = await sql<{ temp_store: number }>`pragma temp_store`.execute(handle.db);
    expect(rows[0]!.temp_store).toBe(2);
  });

  it('reads the file through a memory map', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-sqlite-tx-'));
    handle = openDatabase({ databaseUrl: null, dataDir: dir });
    // A larger value would be cut to the build's maximum silently; the setting asks exactly that.
    const { rows } = await sql<{ mmap_size: number }>`pragma mmap_size`.execute(handle.db);
    expect(rows[0]!.mmap_size).toBe(SQLITE_MMAP_BYTES);
  });

  it('a transaction that SQLite ended itself (the disk full) rejects with that error, not with its rollback\'s', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-sqlite-tx-'));
    handle = openDatabase({ databaseUrl: null, dataDir: dir });
    await sql`create table scratch (value text not null)`.execute(handle.db);
    // A database that cannot grow: as a disk with no room left, its next page fails with SQLITE_FULL.
    const { page_count: pages } = (await sql<{ page_count: number }>`pragma page_count`.execute(handle.db)).rows[0]!;
    await sql.raw(`pragma max_page_count = ${pages}`).execute(handle.db);
    const filling = handle.db.transaction().execute(async (trx) => {
      for (let i = 0; i < 100; i++) await trx.insertInto('scratch' as never).values({ value: 'x'.repeat(1000) } as never).execute();
    });
    await expect(filling).rejects.toMatchObject({ code: 'SQLITE_FULL' });
    // The connection is usable: nothing of the transaction was kept, and it is not left open.
    await sql.raw('pragma max_page_count = 1000000').execute(handle.db);
    expect((await sql<{ n: number }>`select count(*) as n from scratch`.execute(handle.db)).rows[0]!.n).toBe(0);
    await handle.db.transaction().execute((trx) => trx.insertInto('scratch' as never).values({ value: 'kept' } as never).execute());
    expect((await sql<{ n: number }>`select count(*) as n from scratch`.execute(handle.db)).rows[0]!.n).toBe(1);
  });

  it('waits for a lock another connection holds without holding the process, reads going on meanwhile', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-sqlite-tx-'));
    handle = openDatabase({ databaseUrl: null, dataDir: dir });
    await sql`create table scratch (value integer not null)`.execute(handle.db);
    const other = new SqliteDatabase(path.join(dir, 'hoard.sqlite'));
    other.prepare('begin immediate').run();
    other.prepare('insert into scratch (value) values (0)').run();
    const started = performance.now();
    // A statement that is its own transaction, and a transaction: both wait for the lock.
    const alone = sql`insert into scratch (value) values (1)`.execute(handle.db);
    const inTransaction = handle.db.transaction().execute((trx) => sql`insert into scratch (value) values (2)`.execute(trx));
    // The process goes on: a timer fires, and reads are answered (from before the other's write).
    // Held, the process would have sat in SQLite's wait for 5 s, the limits below being generous
    // for a loaded machine.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(performance.now() - started).toBeLessThan(2000);
    for (let i = 0; i < 5; i++) expect((await sql<{ n: number }>`select count(*) as n from scratch`.execute(handle.db)).rows[0]!.n).toBe(0);
    expect(performance.now() - started).toBeLessThan(2500);
    other.prepare('commit').run();
    other.close();
    await Promise.all([alone, inTransaction]);
    const rows = await sql<{ value: number }>`select value from scratch order by value`.execute(handle.db);
    expect(rows.rows.map((r) => r.value)).toEqual([0, 1, 2]);
  });

  it('does not try a statement again inside a transaction, and gives up on a lock kept past the wait', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-sqlite-tx-'));
    handle = openDatabase({ databaseUrl: null, dataDir: dir });
    await sql`create table scratch (value integer not null)`.execute(handle.db);
    const other = new SqliteDatabase(path.join(dir, 'hoard.sqlite'));
    try {
      // A transaction begun by hand (DEFERRED) reads, the other connection then writes: this
      // transaction's write finds its snapshot stale (SQLITE_BUSY_SNAPSHOT). Only a new transaction
      // can go on, so the statement is not tried again: it fails at once.
      await sql`begin`.execute(handle.db);
      await sql`select count(*) from scratch`.execute(handle.db);
      other.prepare('insert into scratch (value) values (9)').run();
      const inTransaction = performance.now();
      await expect(sql`insert into scratch (value) values (1)`.execute(handle.db)).rejects.toMatchObject({ code: expect.stringMatching(/^SQLITE_BUSY/) });
      // Tried again, it would fail only after the 5 s wait.
      expect(performance.now() - inTransaction).toBeLessThan(2000);
      await sql`rollback`.execute(handle.db);
      expect((await sql<{ value: number }>`select value from scratch`.execute(handle.db)).rows).toEqual([{ value: 9 }]);
      // The lock kept past the wait: the statement fails with SQLite's own error, which the HTTP layer answers 503.
      other.prepare('begin immediate').run();
      const started = performance.now();
      await expect(sql`insert into scratch (value) values (2)`.execute(handle.db)).rejects.toMatchObject({ code: expect.stringMatching(/^SQLITE_BUSY/) });
      expect(performance.now() - started).toBeGreaterThanOrEqual(5000);
      other.prepare('rollback').run();
    } finally {
      other.close();
    }
  }, 10_000);
});
