import { z } from 'zod';
import type { Db, Dialect } from '../db/database.ts';
import { forAccount, type Executor } from '../db/account-scope.ts';
import { lockAccountRow } from '../db/locks.ts';
import { hashPassword, MIN_PASSWORD_LENGTH, verifyPassword } from '../auth/passwords.ts';
import { clearHits, takeAttempt } from '../auth/throttle.ts';
import { loginLimits } from './login.ts';
import { readSettings } from '../settings/instance-settings.ts';
import { parseStoredOptions } from '../shared/upload-options.ts';
import { effectiveQuotaBytes } from '../shared/quota.ts';
import { checkProfileOptions, findOwnedProfile } from '../organisation/profiles.ts';
import { parseField } from '../organisation/common.ts';
import { ACCOUNT_NAME_LENGTH, nameSchema } from '../shared/display-name.ts';
import { accountGone, AppError, forbidden, invalid, notFound } from '../errors.ts';
import { claimEmail, deleteAccount } from './users.ts';
import { confirmPassword } from './confirm-password.ts';
import { passwordChangeKey } from './sign-in-keys.ts';

/**
 * Account fields, as sign-up, the administrators' account routes, the account's own settings and
 * the command-line tool take them.
 */
export const accountNameSchema = nameSchema(ACCOUNT_NAME_LENGTH);
// Surrounding spaces trimmed first, as sign-in trims them: a phone keyboard adds one after a
// suggested address.
export const emailSchema = z.preprocess((value) => (typeof value === 'string' ? value.trim() : value), z.email({ message: 'must be an email address' }).max(254));
export const passwordSchema = z.string().min(MIN_PASSWORD_LENGTH, { message: `must be at least ${MIN_PASSWORD_LENGTH} characters` }).max(1024);

/** The signed-in account's own settings, as `GET /api/account` returns them. */
export type { Account as AccountView } from '../api/organisation.ts';
import type { Account as AccountView } from '../api/organisation.ts';

export async function getAccountSettings(db: Executor, userId: string, options: { exemptFromDefaultQuota: boolean }): Promise<AccountView> {
  // The account row itself, not an account-owned table.
  const row = await db
    .selectFrom('users')
    .select(['id', 'email', 'name', 'urlId', 'defaultProfileId', 'uploadDefaults', 'usedBytes', 'quotaBytes'])
    .where('id', '=', userId)
    .executeTakeFirst();
  if (!row) throw notFound('Account not found');
  const { defaultQuotaBytes } = await readSettings(db);
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    urlId: row.urlId,
    defaultProfileId: row.defaultProfileId,
    uploadDefaults: parseStoredOptions(row.uploadDefaults),
    usedBytes: Number(row.usedBytes),
    quotaBytes: effectiveQuotaBytes(row.quotaBytes, defaultQuotaBytes, options.exemptFromDefaultQuota),
  };
}

export interface AccountChanges {
  name?: string | undefined;
  defaultProfileId?: string | null | undefined;
  /** Replaces the stored defaults as a whole. */
  uploadDefaults?: unknown;
  currentPassword?: string | undefined;
  newPassword?: string | undefined;
  /** Needs `currentPassword`; the account's verification stays as it is. */
  email?: string | undefined;
}

export interface Actor {
  userId: string;
  /** The browser session making the change: it survives a password change, the others end. */
  sessionId: string | undefined;
  exemptFromDefaultQuota: boolean;
  /** `profile.update`: the name, upload defaults and default profile. A password needs none. */
  mayUpdateProfile: boolean;
}

// Wrong current passwords are counted like failed sign-ins, so a stolen session cannot be used to
// guess the password at leisure.
const WRONG_PASSWORDS_PER_ACCOUNT = 10;

async function checkCurrentPassword(db: Db, userId: string, currentPassword: string): Promise<void> {
  // Counted before the verification, so parallel attempts cannot all pass the limit.
  await takeAttempt(db, passwordChangeKey(userId), WRONG_PASSWORDS_PER_ACCOUNT, loginLimits.windowMs, 'Too many wrong passwords; try again later');
  const row = await db.selectFrom('users').select('passwordHash').where('id', '=', userId).executeTakeFirst();
  if (!(await verifyPassword(row?.passwordHash ?? null, currentPassword))) {
    throw forbidden('currentPassword: the current password is not correct');
  }
  await clearHits(db, passwordChangeKey(userId));
}

/**
 * Changes the account's own settings. A new password needs the current one; setting it ends every
 * other browser session of the account (named tokens and the legacy credential are not affected,
 * spec Authentication 10).
 */
export async function updateAccountSettings(db: Db, dialect: Dialect, actor: Actor, changes: AccountChanges): Promise<AccountView> {
  const { userId } = actor;
  const profileChanges = changes.name !== undefined || changes.defaultProfileId !== undefined || changes.uploadDefaults !== undefined;
  if (profileChanges && !actor.mayUpdateProfile) throw forbidden();
  const name = changes.name === undefined ? undefined : parseField(accountNameSchema, changes.name, 'name');

  let passwordHash: string | undefined;
  if (changes.newPassword !== undefined || changes.currentPassword !== undefined || changes.email !== undefined) {
    if (changes.newPassword === undefined && changes.email === undefined) throw invalid('currentPassword: given without newPassword or email, the changes it is for');
    if (changes.currentPassword === undefined) throw invalid(`currentPassword: required to change the ${changes.newPassword === undefined ? 'email' : 'password'}`);
    if (changes.newPassword !== undefined && changes.newPassword.length < MIN_PASSWORD_LENGTH) throw invalid(`newPassword: must be at least ${MIN_PASSWORD_LENGTH} characters`);
    await checkCurrentPassword(db, userId, changes.currentPassword);
    // Hashing is slow; it happens before the transaction so no lock is held meanwhile.
    if (changes.newPassword !== undefined) passwordHash = await hashPassword(changes.newPassword);
  }

  await db.transaction().execute(async (trx) => {
    // The address first: claiming it takes the administration's lock, which an administrator's
    // change takes before the account's row; taking them in the other order here could deadlock.
    const email = changes.email === undefined ? undefined : await claimEmail(trx, dialect, userId, changes.email);
    // Serialised with profile and tag deletion, which rewrite the fields checked here.
    await lockAccountRow(trx, dialect, userId);
    const set: { name?: string; email?: string; emailVerified?: number; defaultProfileId?: string | null; uploadDefaults?: string; passwordHash?: string; updatedAt: number } = {
      updatedAt: Date.now(),
    };
    // Verification, an administrator vouching for the account (Hoard sends no email), stays: made
    // unverified, an account fixing a typo found its tokens and uploader apps refused where the
    // instance requires verified addresses, until an administrator came by.
    if (email !== undefined) set.email = email;
    if (name !== undefined) set.name = name;
    if (changes.defaultProfileId !== undefined) {
      if (changes.defaultProfileId !== null && !(await findOwnedProfile(trx, userId, changes.defaultProfileId))) throw notFound('Upload profile not found');
      set.defaultProfileId = changes.defaultProfileId;
    }
    if (changes.uploadDefaults !== undefined) set.uploadDefaults = JSON.stringify(await checkProfileOptions(trx, userId, changes.uploadDefaults, 'uploadDefaults'));
    if (passwordHash !== undefined) set.passwordHash = passwordHash;
    await trx.updateTable('users').set(set).where('id', '=', userId).execute();
    if (passwordHash !== undefined) {
      const others = forAccount(trx, userId).deleteFrom('sessions');
      await (actor.sessionId === undefined ? others : others.where('id', '!=', actor.sessionId)).execute();
    }
    // The current password was proved here (a new password, a new address): that confirms this
    // session for an hour (docs/decisions.md, "Recent sign-in"), as POST /api/auth/confirm does. After
    // a suspected theft, changing the password and then reviewing passkeys and two-factor asks once.
    if ((passwordHash !== undefined || email !== undefined) && actor.sessionId !== undefined) {
      await forAccount(trx, userId).updateTable('sessions').set({ confirmedAt: Date.now() }).where('id', '=', actor.sessionId).execute();
    }
  });
  return getAccountSettings(db, userId, { exemptFromDefaultQuota: actor.exemptFromDefaultQuota });
}

/**
 * The account deletes itself, with its password (docs/decisions.md, "Leaving an instance"): its
 * files, bytes included, links, tokens, webhooks, sessions and the unused invites it made. A wrong
 * password is 403 and counts as a failed sign-in; the last administrator is refused (409), as an
 * administrator deleting them would be.
 */
export async function deleteOwnAccount(db: Db, dialect: Dialect, user: { id: string; email: string }, password: string, ip: string): Promise<void> {
  await confirmPassword(db, user, password, ip);
  await deleteAccount(db, dialect, user.id).catch((error: unknown) => {
    // Deleted meanwhile by someone else (an administrator, another tab): for this request, an
    // account that is gone, as for any other of its requests.
    throw error instanceof AppError && error.kind === 'not_found' ? accountGone() : error;
  });
}
