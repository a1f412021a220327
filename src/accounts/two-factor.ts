import { Secret, TOTP } from 'otpauth';
import type { Db, Dialect } from '../db/database.ts';
import type { Transaction } from 'kysely';
import type { Database } from '../db/schema.ts';
import type { AlsoInTransaction } from '../db/also.ts';
import { lockAccountRow } from '../db/locks.ts';
import { forAccount, type Executor } from '../db/account-scope.ts';
import { newId } from '../db/ids.ts';
import type { SecretBox } from '../auth/secret-box.ts';
import type { Logger } from 'pino';
import { passwordFingerprint } from '../auth/passwords.ts';
import { randomSecret, sha256Hex } from '../auth/secrets.ts';
import { clearHits, clearHitsStartingWith, refundAttempt, takeAttempt } from '../auth/throttle.ts';
import { accountGone, conflict, invalid, notFound, unauthorized } from '../errors.ts';
import { loginAttemptKey, loginFailureKey, loginLimits, TOO_MANY_SIGN_INS } from './login.ts';
import { confirmPassword } from './confirm-password.ts';
import { accountSignInKeys } from './sign-in-keys.ts';
import { assertCanManage, findUserById, type UserRow } from './users.ts';
import type { PermissionSet } from '../auth/permissions.ts';

/**
 * Two-factor codes (contract §8): TOTP as RFC 6238 gives it (SHA-1, 6 digits, 30-second steps),
 * with `otpauth` doing the arithmetic. A code is accepted for the current step and one either side,
 * and each step's code once per account; recovery codes work once each.
 */
export const twoFactorLimits = {
  secretBytes: 20,
  driftSteps: 1,
  recoveryCodes: 10,
  ticketLifetimeMs: 5 * 60 * 1000,
  ticketFailures: 5,
} as const;

const PERIOD_SECONDS = 30;
const ISSUER = 'Hoard';

interface Deps {
  db: Db;
  dialect: Dialect;
  secretBox: SecretBox;
  log: Pick<Logger, 'error'>;
}

/**
 * An account's sealed TOTP secret, or null when it does not open with this instance's key
 * (SECRET_KEY or DATA_DIR/secret.key changed since it was sealed, or differs between processes):
 * said in the log, where the operator can act on it; to the account, its codes simply do not match
 * (its recovery codes, kept as hashes, still work, and an administrator can reset two-factor).
 */
function openTotpSecret(deps: Deps, sealed: string, userId: string): string | null {
  try {
    return deps.secretBox.open(sealed, totpSealContext(userId));
  } catch (error) {
    deps.log.error({ userId, err: error }, 'a two-factor secret does not open with this instance secret key (SECRET_KEY or DATA_DIR/secret.key changed?); the account can sign in with a recovery code, or an administrator can reset its two-factor');
    return null;
  }
}

// Sealed secrets are bound to their account, so a value copied to another row does not open.
export const totpSealContext = (userId: string) => `totp:${userId}`;

function totpFor(secretBase32: string, label: string): TOTP {
  return new TOTP({ issuer: ISSUER, label, algorithm: 'SHA1', digits: 6, period: PERIOD_SECONDS, secret: Secret.fromBase32(secretBase32) });
}

async function totpState(db: Executor, userId: string) {
  return db.selectFrom('users').select(['id', 'email', 'totpSecretSealed', 'totpPendingSealed']).where('id', '=', userId).executeTakeFirstOrThrow(accountGone);
}

export async function twoFactorEnabled(db: Executor, userId: string): Promise<boolean> {
  return (await totpState(db, userId)).totpSecretSealed !== null;
}

/** A new secret, pending until a first code confirms it; it replaces an earlier unconfirmed one. */
export async function setUpTotp(deps: Deps, userId: string): Promise<{ secret: string; otpauthUrl: string }> {
  const state = await totpState(deps.db, userId);
  if (state.totpSecretSealed !== null) throw conflict('Two-factor is already on; turn it off first to set up a new authenticator');
  const secret = new Secret({ size: twoFactorLimits.secretBytes }).base32;
  await deps.db.updateTable('users').set({ totpPendingSealed: deps.secretBox.seal(secret, totpSealContext(userId)) }).where('id', '=', userId).execute();
  return { secret, otpauthUrl: totpFor(secret, state.email).toString() };
}

/** The time step a code belongs to, if it is a current code (±1 step) of this secret; null otherwise. */
function acceptedStep(secretBase32: string, code: string, now: number): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const delta = totpFor(secretBase32, ISSUER).validate({ token: code, timestamp: now, window: twoFactorLimits.driftSteps });
  if (delta === null) return null;
  return Math.floor(now / 1000 / PERIOD_SECONDS) + delta;
}

/**
 * Records a step's code as used, unless it was used before (by another request too: of two at once,
 * one inserts the row). Each step's code works once, whichever steps were used around it (contract
 * §8); rows of steps no code can belong to any more go first.
 */
async function claimStep(db: Executor, userId: string, step: number, now: number): Promise<boolean> {
  const scope = forAccount(db, userId);
  await scope.deleteFrom('totpUsedSteps').where('step', '<', Math.floor(now / 1000 / PERIOD_SECONDS) - twoFactorLimits.driftSteps).execute();
  const claimed = await scope.insertInto('totpUsedSteps', { step }).onConflict((oc) => oc.columns(['userId', 'step']).doNothing()).executeTakeFirst();
  return Number(claimed.numInsertedOrUpdatedRows ?? 0) === 1;
}

function newRecoveryCode(): string {
  // 10 base32 characters (50 bits) in two groups: easy to copy from paper, impossible to guess.
  const raw = new Secret({ size: 10 }).base32.slice(0, 10).toLowerCase();
  return `${raw.slice(0, 5)}-${raw.slice(5)}`;
}

const normalizeRecoveryCode = (code: string) => code.trim().toLowerCase().replace(/[\s-]/g, '');
/** A code as typed: authenticator apps show it in groups ("123 456"), so spaces are no part of it. */
const typedCode = (code: string) => code.replace(/\s/g, '');
const recoveryHash = (code: string) => sha256Hex(normalizeRecoveryCode(code));

/** Replaces the account's recovery codes with new ones; returns them (shown once). */
async function replaceRecoveryCodes(db: Executor, userId: string): Promise<string[]> {
  const codes = Array.from({ length: twoFactorLimits.recoveryCodes }, newRecoveryCode);
  const scope = forAccount(db, userId);
  await scope.deleteFrom('recoveryCodes').execute();
  await scope.insertInto('recoveryCodes', codes.map((code) => ({ id: newId(), codeHash: recoveryHash(code), usedAt: null }))).execute();
  return codes;
}

/** Turns two-factor on with a first code of the pending secret; returns the recovery codes. */
export async function enableTotp(deps: Deps, userId: string, code: string): Promise<string[]> {
  const state = await totpState(deps.db, userId);
  if (state.totpSecretSealed !== null) throw conflict('Two-factor is already on');
  if (state.totpPendingSealed === null) throw conflict('Set up two-factor first (POST /api/auth/totp/setup)');
  const secret = openTotpSecret(deps, state.totpPendingSealed, userId);
  if (secret === null) throw conflict('The two-factor set-up was made with another secret key of this instance; set it up again (POST /api/auth/totp/setup)');
  const now = Date.now();
  const step = acceptedStep(secret, typedCode(code), now);
  if (step === null) throw invalid('code: not a current code of the newest secret set up; check the time on your device, and that no other tab or window started a new set-up since (the newest replaces the others: scan its code instead)');
  return deps.db.transaction().execute(async (trx) => {
    const result = await trx
      .updateTable('users')
      .set({ totpSecretSealed: state.totpPendingSealed, totpPendingSealed: null, updatedAt: now })
      .where('id', '=', userId)
      .where('totpSecretSealed', 'is', null)
      .where('totpPendingSealed', '=', state.totpPendingSealed)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) throw conflict('Two-factor changed meanwhile; try again');
    // The code that turned it on is used: it does not sign in too.
    await forAccount(trx, userId).deleteFrom('totpUsedSteps').execute();
    await claimStep(trx, userId, step, now);
    return replaceRecoveryCodes(trx, userId);
  });
}

/** Turns two-factor off (with the password): the secret and the recovery codes go. */
export async function disableTotp(deps: Deps, userId: string, password: string, ip: string): Promise<void> {
  const state = await totpState(deps.db, userId);
  if (state.totpSecretSealed === null) throw conflict('Two-factor is off');
  await confirmPassword(deps.db, state, password, ip);
  await resetTwoFactor(deps.db, userId);
}

/** Ten new recovery codes (with the password); the old ones stop working. */
export async function regenerateRecoveryCodes(deps: Deps, userId: string, password: string, ip: string): Promise<string[]> {
  const state = await totpState(deps.db, userId);
  if (state.totpSecretSealed === null) throw conflict('Two-factor is off');
  const codeIds = async (db: Executor) => (await forAccount(db, userId).selectFrom('recoveryCodes').select('id').orderBy('id').execute()).map((r) => r.id).join();
  const seen = await codeIds(deps.db);
  await confirmPassword(deps.db, state, password, ip);
  return deps.db.transaction().execute(async (trx) => {
    // Of two requests at once, one replaces the codes it saw; the other would answer codes that the
    // first one's had already replaced, or replace the first one's (whose answer then listed codes
    // that never worked): it is told so instead.
    await lockAccountRow(trx, deps.dialect, userId);
    if ((await codeIds(trx)) !== seen) throw conflict('The recovery codes were replaced meanwhile (another tab or request): use the codes that answer showed, or ask for new ones again');
    return replaceRecoveryCodes(trx, userId);
  });
}

/**
 * Two-factor off, without a password: for the account itself after its password check, and for an
 * administrator helping a locked-out user (DELETE /api/users/{id}/two-factor, the CLI). Named tokens
 * and the legacy credential are not touched (spec, Authentication 10).
 */
export async function resetTwoFactor(db: Db, userId: string, also?: (trx: Transaction<Database>) => Promise<void>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.updateTable('users').set({ totpSecretSealed: null, totpPendingSealed: null, updatedAt: Date.now() }).where('id', '=', userId).execute();
    await forAccount(trx, userId).deleteFrom('totpUsedSteps').execute();
    await forAccount(trx, userId).deleteFrom('recoveryCodes').execute();
    await forAccount(trx, userId).deleteFrom('signInTickets').execute();
    if (also) await also(trx);
  });
  // Wrong codes counted on the account (until a code step succeeds) would hold the sign-in the
  // reset is for: they go, from every address.
  const user = await findUserById(db, userId);
  if (user) await clearHitsStartingWith(db, accountSignInKeys(user.email));
}

/**
 * An administrator turns another account's two-factor off (contract §8), under the rule of every
 * change to an account: not one holding a permission the administrator lacks. Never its own: that
 * takes its password (POST /api/auth/totp/disable), or a stolen session of any account managing
 * users would drop its second factor without it.
 */
/** `also` is given the account's email, with the reset. */
export async function resetTwoFactorAsAdmin(db: Db, actor: { id: string; permissions: PermissionSet }, userId: string, also?: AlsoInTransaction<{ email: string }>): Promise<void> {
  if (actor.id === userId) throw invalid('You cannot turn off your own two-factor from the administration: turn it off in your account settings, with your password');
  const user = await findUserById(db, userId);
  if (!user) throw notFound('User not found');
  await assertCanManage(db, actor.permissions, userId);
  await resetTwoFactor(db, userId, also && ((trx) => also(trx, { email: user.email })));
}

/** The password step's answer when two-factor is on: a ticket for the code step, and no session. */
export async function issueSignInTicket(db: Db, userId: string, passwordFingerprint: string): Promise<string> {
  const ticket = randomSecret(32);
  const now = Date.now();
  // The account's used, dead and expired tickets go when it gets a new one (they can never work
  // again), so the table holds only tickets of the last 5 minutes without a sweeping job.
  await forAccount(db, userId)
    .deleteFrom('signInTickets')
    .where((eb) => eb.or([eb('usedAt', 'is not', null), eb('expiresAt', '<=', now), eb('failures', '>=', twoFactorLimits.ticketFailures)]))
    .execute();
  await forAccount(db, userId)
    .insertInto('signInTickets', { id: sha256Hex(ticket), expiresAt: now + twoFactorLimits.ticketLifetimeMs, usedAt: null, passwordFingerprint })
    .execute();
  return ticket;
}

/**
 * The code step: a current TOTP code or an unused recovery code for a live ticket. Every failure is
 * the generic 401, counted toward sign-in throttling and against the ticket before the check; a
 * ticket works once and dies after 5 wrong codes.
 */
export async function completeTwoFactorSignIn(deps: Deps, input: { ticket: string; code: string; ip: string }): Promise<{ user: UserRow; passwordFingerprint: string | null }> {
  const now = Date.now();
  const ticketId = sha256Hex(input.ticket);
  const ticket = await deps.db.selectFrom('signInTickets').selectAll().where('id', '=', ticketId).executeTakeFirst();
  const owner = ticket ? await findUserById(deps.db, ticket.userId) : undefined;
  // Counted like password attempts (src/accounts/login.ts): on the address alone, given back once
  // the sign-in succeeds, and on the account and address when the ticket is known.
  const ipKey = loginFailureKey(input.ip);
  await takeAttempt(deps.db, ipKey, loginLimits.failuresPerIp, loginLimits.windowMs, TOO_MANY_SIGN_INS);
  const key = owner ? loginAttemptKey(owner.email, input.ip) : null;
  if (key !== null) await takeAttempt(deps.db, key, loginLimits.perAccountAndIp, loginLimits.windowMs, TOO_MANY_SIGN_INS);
  if (!ticket || !owner || key === null) throw unauthorized();
  // The code is counted against the ticket before it is checked, in one statement, so that codes
  // sent at once cannot all be checked on the strength of "fewer than 5 so far". A right code
  // spends the ticket below, so the count only ever matters for wrong ones.
  const counted = await deps.db
    .updateTable('signInTickets')
    .set((eb) => ({ failures: eb('failures', '+', 1) }))
    .where('id', '=', ticketId)
    .where('usedAt', 'is', null)
    .where('failures', '<', twoFactorLimits.ticketFailures)
    .where('expiresAt', '>', now)
    .executeTakeFirst();
  if (Number(counted.numUpdatedRows) !== 1) throw unauthorized();
  // A ticket of a password the account no longer has (changed since) is dead before any code is
  // looked at: checked only when the session was made, a recovery code or the step's code was spent
  // on a sign-in that was then refused. The session's own check still closes a change in between.
  const current = await deps.db.selectFrom('users').select('passwordHash').where('id', '=', owner.id).executeTakeFirst();
  if (!current || ticket.passwordFingerprint === null || passwordFingerprint(current.passwordHash) !== ticket.passwordFingerprint) throw unauthorized();

  const state = await totpState(deps.db, owner.id);
  if (state.totpSecretSealed === null) throw unauthorized();
  const code = typedCode(input.code);
  let accepted = false;
  const secret = openTotpSecret(deps, state.totpSecretSealed, owner.id);
  const step = secret === null ? null : acceptedStep(secret, code, now);
  if (step !== null) accepted = await claimStep(deps.db, owner.id, step, now);
  else if (!/^\d{6}$/.test(code)) {
    const used = await forAccount(deps.db, owner.id).updateTable('recoveryCodes').set({ usedAt: now }).where('codeHash', '=', recoveryHash(code)).where('usedAt', 'is', null).executeTakeFirst();
    accepted = Number(used.numUpdatedRows) === 1;
  }
  if (!accepted) throw unauthorized();
  // The ticket works once: of two requests racing with good codes, one signs in.
  const spent = await deps.db.updateTable('signInTickets').set({ usedAt: now }).where('id', '=', ticketId).where('usedAt', 'is', null).where('expiresAt', '>', now).executeTakeFirst();
  if (Number(spent.numUpdatedRows) !== 1) throw unauthorized();
  await clearHits(deps.db, key);
  await refundAttempt(deps.db, ipKey);
  // The session is made only while the account keeps the password the ticket was earned with.
  return { user: owner, passwordFingerprint: ticket.passwordFingerprint };
}
