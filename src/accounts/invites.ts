import type { Transaction } from 'kysely';
import type { Database } from '../db/schema.ts';
import type { Executor } from '../db/account-scope.ts';
import type { Db } from '../db/database.ts';
import type { AlsoInTransaction } from '../db/also.ts';
import { newId } from '../db/ids.ts';
import { randomSecret } from '../auth/secrets.ts';
import { invalid, notFound } from '../errors.ts';
import type { Invite } from '../api/admin.ts';

export const INVITE_LIFETIME_DAYS = 7;

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The longest note on an invite, in characters. */
export const INVITE_NOTE_LENGTH = 200;

export async function createInvite(db: Db, createdBy: string, options: { expiresAt?: Date | undefined; note?: string | null } = {}, also?: AlsoInTransaction<Invite>): Promise<Invite> {
  const now = Date.now();
  const expires = options.expiresAt ? options.expiresAt.getTime() : now + INVITE_LIFETIME_DAYS * 24 * 3600 * 1000;
  if (expires <= now) throw invalid('expiresAt: must be in the future');
  const note = options.note ?? null;
  const row = { id: newId(), code: randomSecret(12), createdBy, createdAt: now, expiresAt: expires, usedAt: null, usedBy: null, note };
  return db.transaction().execute(async (trx) => {
    await trx.insertInto('invites').values(row).execute();
    const maker = await trx.selectFrom('users').select(['id', 'email']).where('id', '=', createdBy).executeTakeFirst();
    const invite = { id: row.id, code: row.code, createdAt: iso(now)!, expiresAt: iso(expires)!, usedAt: null, createdBy: maker ?? null, usedBy: null, note };
    if (also) await also(trx, invite);
    return invite;
  });
}

/** Every invite, newest first, with who made it and who registered with it (an administrator handing out many tells them apart by these). */
export async function listInvites(db: Executor): Promise<Invite[]> {
  const rows = await db
    .selectFrom('invites')
    .leftJoin('users as maker', 'maker.id', 'invites.createdBy')
    .leftJoin('users as invitee', 'invitee.id', 'invites.usedBy')
    .select(['invites.id', 'invites.code', 'invites.createdAt', 'invites.expiresAt', 'invites.usedAt', 'invites.note', 'maker.id as makerId', 'maker.email as makerEmail', 'invitee.id as inviteeId', 'invitee.email as inviteeEmail'])
    .orderBy('invites.createdAt', 'desc')
    .orderBy('invites.id', 'desc')
    .execute();
  return rows.map((r) => ({
    id: r.id,
    code: r.code,
    createdAt: iso(r.createdAt)!,
    expiresAt: iso(r.expiresAt)!,
    usedAt: iso(r.usedAt),
    createdBy: r.makerId !== null && r.makerEmail !== null ? { id: r.makerId, email: r.makerEmail } : null,
    usedBy: r.inviteeId !== null && r.inviteeEmail !== null ? { id: r.inviteeId, email: r.inviteeEmail } : null,
    note: r.note,
  }));
}

/**
 * The unused invites an account made go with it: a moderator removed from the instance no longer
 * lets people in through codes handed out before. Used ones stay, as the record of who came in how.
 */
export async function withdrawInvitesOf(db: Executor, userId: string): Promise<void> {
  await db.deleteFrom('invites').where('createdBy', '=', userId).where('usedAt', 'is', null).execute();
}

/** Withdraws an invite; returns its note, for the administration log. */
export async function deleteInvite(db: Db, id: string, also?: AlsoInTransaction<{ note: string | null }>): Promise<{ note: string | null }> {
  return db.transaction().execute(async (trx) => {
    const invite = await trx.deleteFrom('invites').where('id', '=', id).returning('note').executeTakeFirst();
    if (!invite) throw notFound('Invite not found');
    if (also) await also(trx, invite);
    return invite;
  });
}

const UNUSABLE = 'inviteCode: the invite code is unknown, used or expired';

/** Refuses a code that is unknown, used or expired (registration checks it before hashing). */
export async function assertInviteUsable(db: Executor, code: string): Promise<void> {
  const usable = await db.selectFrom('invites').select('id').where('code', '=', code).where('usedAt', 'is', null).where('expiresAt', '>', Date.now()).executeTakeFirst();
  if (!usable) throw invalid(UNUSABLE);
}

/** Marks the invite used by `userId`, atomically: two registrations cannot share one code. */
export async function consumeInvite(trx: Transaction<Database>, code: string, userId: string): Promise<void> {
  const now = Date.now();
  const result = await trx
    .updateTable('invites')
    .set({ usedAt: now, usedBy: userId })
    .where('code', '=', code)
    .where('usedAt', 'is', null)
    .where('expiresAt', '>', now)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) !== 1) throw invalid(UNUSABLE);
}
