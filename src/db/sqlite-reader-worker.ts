/**
 * A reader of the SQLite database, in a thread of its own (src/db/sqlite-readers.ts): it runs the
 * statements it is sent on its own connection, one at a time, and answers each with its rows or
 * its error.
 */
import { parentPort, workerData } from 'node:worker_threads';
import SqliteDatabase from 'better-sqlite3';
import { applyReadSettings, withStatementCache } from './sqlite-settings.ts';

export interface ReaderRequest {
  id: number;
  sql: string;
  parameters: readonly unknown[];
}
export type ReaderAnswer = { id: number; rows: unknown[] } | { id: number; error: { message: string; code: unknown } };

const file = new SqliteDatabase((workerData as { path: string }).path, { fileMustExist: true });
// This connection never writes; the server's own connection put the database in WAL mode, in which
// readers neither wait for the writer nor hold it up.
file.pragma('query_only = ON');
// A wait for a lock (WAL recovery after a crash, a checkpoint that restarts the log) holds this
// thread only.
file.pragma('busy_timeout = 5000');
applyReadSettings(file);
const statements = withStatementCache(file);

parentPort!.on('message', ({ id, sql, parameters }: ReaderRequest) => {
  let answer: ReaderAnswer;
  try {
    const statement = statements.prepare(sql);
    if (!statement.reader) throw Object.assign(new Error('A reader runs only statements that return rows'), { code: 'HOARD_READER_WRITE' });
    answer = { id, rows: statement.all(parameters) };
  } catch (error) {
    const { message, code } = error as { message?: unknown; code?: unknown };
    answer = { id, error: { message: String(message ?? error), code } };
  }
  parentPort!.postMessage(answer);
});
