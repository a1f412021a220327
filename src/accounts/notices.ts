import type { Executor } from '../db/account-scope.ts';
import { forAccount } from '../db/account-scope.ts';
import { newId } from '../db/ids.ts';
import type { AccountNotice } from '../api/accounts.ts';
import { notFound } from '../errors.ts';

/** At most this many notices are kept per account; older ones go as new ones come. */
const KEPT_NOTICES = 100;

/**
 * Tells an account something it sees until it dismisses it (docs/decisions.md, "Taking down
 * content"). Kept to the newest KEPT_NOTICES: a mass take-down of a spam account's thousands of files
 * must not give it thousands of rows to page through.
 */
export async function addNotice(db: Executor, userId: string, notice: { kind: AccountNotice['kind']; subject: string; reason: string | null }): Promise<void> {
  const account = forAccount(db, userId);
  await account.insertInto('accountNotices', { id: newId(), ...notice, createdAt: Date.now() }).execute();
  const kept = account.selectFrom('accountNotices').select('id').orderBy('id', 'desc').limit(KEPT_NOTICES);
  await account.deleteFrom('accountNotices').where('id', 'not in', kept).execute();
}

/** The account's notices, newest first. */
export async function listNotices(db: Executor, userId: string): Promise<AccountNotice[]> {
  const rows = await forAccount(db, userId).selectFrom('accountNotices').select(['id', 'kind', 'subject', 'reason', 'createdAt']).orderBy('id', 'desc').execute();
  return rows.map((row) => ({ ...row, createdAt: new Date(Number(row.createdAt)).toISOString() }));
}

/** Dismisses one of the account's notices; another account's is not found. */
export async function dismissNotice(db: Executor, userId: string, id: string): Promise<void> {
  const { numDeletedRows } = await forAccount(db, userId).deleteFrom('accountNotices').where('id', '=', id).executeTakeFirst();
  if (numDeletedRows === 0n) throw notFound('Notice not found');
}
