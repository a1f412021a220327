import { sql, type Transaction } from 'kysely';
import type { Database } from '../db/schema.ts';
import type { Db, Dialect } from '../db/database.ts';
import { forAccount, type Executor } from '../db/account-scope.ts';
import { lockAccountRow } from '../db/locks.ts';
import { inBatches } from '../db/batches.ts';
import type { AlsoInTransaction } from '../db/also.ts';
import { newId, randomLowerAlnum } from '../db/ids.ts';
import { hashPassword } from '../auth/passwords.ts';
import { loadAccess, parsePermissions, roleIdBySystemKey, type RoleSummary } from '../auth/roles.ts';
import { hasPermission, type PermissionSet } from '../auth/permissions.ts';
import type { UserRow } from '../auth/principal.ts';
import { readSettings } from '../settings/instance-settings.ts';
import { assertInviteUsable, consumeInvite, withdrawInvitesOf } from './invites.ts';
import { ACCOUNT_NAME_LENGTH } from '../shared/display-name.ts';
import { rolesInOrder } from '../shared/name-order.ts';
import { effectiveQuotaBytes } from '../shared/quota.ts';
import { clearHits, clearHitsStartingWith, takeAttempt } from '../auth/throttle.ts';
import { scheduleStorageDeletes } from '../jobs/storage-cleanup.ts';
import { scheduleSessionStorageAbort } from '../chunks/chunk-session-jobs.ts';
import { conflict, forbidden, invalid, notFound } from '../errors.ts';
import type { Me } from '../api/accounts.ts';
import type { AdminUser } from '../api/admin.ts';
import { clientKey } from '../shared/client-key.ts';
import { accountSignInKeys, normalizeEmail, passwordChangeKey } from './sign-in-keys.ts';

// Defined with the principal it identifies (auth sits below accounts); exported here for callers.
export type { UserRow };

const userColumns = ['id', 'email', 'name', 'urlId', 'emailVerified', 'quotaBytes', 'createdAt'] as const;

export { normalizeEmail };

export async function findUserById(db: Executor, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').select(userColumns).where('id', '=', id).executeTakeFirst();
}

export async function findUserForLogin(db: Executor, email: string) {
  return db.selectFrom('users').select([...userColumns, 'passwordHash', 'suspendedAt']).where('email', '=', normalizeEmail(email)).executeTakeFirst();
}

export const SUSPENDED = 'This account is suspended: ask an administrator of this instance';

/**
 * Refuses a sign-in of a suspended account, once it has proved who it is (a password, a code, a
 * passkey): only its owner learns that it is suspended, and learns why the sign-in stops.
 */
export async function assertNotSuspended(db: Executor, userId: string): Promise<void> {
  const row = await db.selectFrom('users').select('suspendedAt').where('id', '=', userId).executeTakeFirst();
  if (row && row.suspendedAt !== null) throw forbidden(SUSPENDED);
}

/** What the account's sign-in security adds to `/api/auth/me` (contract §8). */
export interface SignInSecurity {
  passkeyCount: number;
  twoFactorEnabled: boolean;
}

export async function loadSignInSecurity(db: Executor, userId: string): Promise<SignInSecurity> {
  const passkeys = await forAccount(db, userId)
    .selectFrom('passkeys')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  const user = await db.selectFrom('users').select('totpSecretSealed').where('id', '=', userId).executeTakeFirst();
  return { passkeyCount: Number(passkeys.count), twoFactorEnabled: user?.totpSecretSealed != null };
}

/** The signed-in account as `/api/auth/me` shows it. */
export function selfView(user: UserRow, access: { permissions: PermissionSet; roles: RoleSummary[] }, security: SignInSecurity): Me {
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    urlId: user.urlId,
    emailVerified: user.emailVerified === 1,
    permissions: [...access.permissions].sort(),
    roles: access.roles,
    passkeyCount: security.passkeyCount,
    twoFactorEnabled: security.twoFactorEnabled,
  };
}

export async function describeSelf(db: Executor, user: UserRow): Promise<Me> {
  return selfView(user, await loadAccess(db, user.id), await loadSignInSecurity(db, user.id));
}

/** The advisory lock key of account creation and administration (any constant unique in this application). */
const ADMINISTRATION_LOCK = 0x686f6164;

// Two concurrent registrations on an empty instance must not both become Administrator; SQLite
// already runs one write transaction at a time. An advisory lock, taken by every creation and
// administrative change: a lock on the users table also stopped every other writer of an account
// row, and deadlocked an account's deletion, which waits for the account's row, with a request of
// that account holding the row and waiting to update it (a tag's creation, an upload's charge).
async function serializeAccountCreation(trx: Transaction<Database>, dialect: Dialect): Promise<void> {
  if (dialect === 'postgres') await sql`select pg_advisory_xact_lock(${ADMINISTRATION_LOCK})`.execute(trx);
}

/**
 * An address given to an existing account (its own settings, or an administrator's change): normalised
 * as sign-in normalises it, and refused (409) when another account has it. Runs in the change's
 * transaction, serialised with account creation, so two accounts never end up with one address.
 */
export async function claimEmail(trx: Transaction<Database>, dialect: Dialect, userId: string, email: string): Promise<string> {
  const normalized = normalizeEmail(email);
  await serializeAccountCreation(trx, dialect);
  const holder = await trx.selectFrom('users').select('id').where('email', '=', normalized).executeTakeFirst();
  if (holder && holder.id !== userId) throw conflict('An account with this email already exists');
  return normalized;
}

interface NewAccount {
  email: string;
  password: string;
  name?: string | undefined;
  emailVerified: boolean;
  roleIds: string[];
}

async function insertAccount(trx: Transaction<Database>, account: NewAccount, passwordHash: string): Promise<UserRow> {
  const email = normalizeEmail(account.email);
  const existing = await trx.selectFrom('users').select('id').where('email', '=', email).executeTakeFirst();
  if (existing) throw conflict('An account with this email already exists');
  const now = Date.now();
  const row: UserRow = {
    id: newId(),
    email,
    // Without a name, the address's local part, held to a name's 100 characters (code points).
    name: account.name?.trim() || [...email.split('@')[0]!].slice(0, ACCOUNT_NAME_LENGTH).join(''),
    urlId: randomLowerAlnum(8),
    emailVerified: account.emailVerified ? 1 : 0,
    quotaBytes: null,
    createdAt: now,
  };
  await trx.insertInto('users').values({ ...row, passwordHash, updatedAt: now }).execute();
  const roleIds = [...new Set(account.roleIds)];
  if (roleIds.length > 0) await trx.insertInto('userRoles').values(roleIds.map((roleId) => ({ userId: row.id, roleId }))).execute();
  return row;
}

/**
 * Self-service registration. The very first account becomes the Administrator; after that the
 * instance must be open, or the caller must bring an unused invite.
 */
export async function register(
  db: Db,
  dialect: Dialect,
  input: { email: string; password: string; name?: string | undefined; inviteCode?: string | undefined; ip: string },
): Promise<UserRow> {
  // Cheap refusals first: a closed instance or an unusable invite costs no hash and no count. The
  // transaction below decides again, atomically.
  const { count: accounts } = await db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
  if (Number(accounts) > 0) {
    if (input.inviteCode !== undefined) await assertInviteUsable(db, input.inviteCode);
    else await assertRegistrationOpen(db);
  }
  // Counted before the (slow) hash, so a flood of registrations costs little.
  await takeAttempt(db, `register:ip:${clientKey(input.ip)}`, registrationLimit.perIp, registrationLimit.windowMs, 'Too many registrations from this address; try again later');
  const passwordHash = await hashPassword(input.password);
  return db.transaction().execute(async (trx) => {
    await serializeAccountCreation(trx, dialect);
    const { count } = await trx.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
    if (Number(count) === 0) {
      const adminRoleId = await roleIdBySystemKey(trx, 'administrator');
      return insertAccount(trx, { ...input, emailVerified: true, roleIds: [adminRoleId] }, passwordHash);
    }
    if (input.inviteCode !== undefined) {
      const user = await insertAccount(trx, { ...input, emailVerified: false, roleIds: [] }, passwordHash);
      await consumeInvite(trx, input.inviteCode, user.id);
      return user;
    }
    assertOpen((await readSettings(trx)).registration);
    return insertAccount(trx, { ...input, emailVerified: false, roleIds: [] }, passwordHash);
  });
}

/** Self-service registrations per client IP address per window (counted before hashing). */
export const registrationLimit = { perIp: 100, windowMs: 60 * 60 * 1000 } as const;

function assertOpen(registration: string): void {
  if (registration !== 'open') {
    throw forbidden(registration === 'invite' ? 'Registration requires an invite code' : 'Registration is closed on this instance');
  }
}

async function assertRegistrationOpen(db: Executor): Promise<void> {
  assertOpen((await readSettings(db)).registration);
}

/** Nobody may hand out, or take away, a permission they do not hold themselves. */
export function assertCanGrant(actor: PermissionSet, granted: Iterable<string>, takenAway: Iterable<string> = []): void {
  for (const [permissions, verb] of [[granted, 'grant'], [takenAway, 'take away']] as const) {
    for (const permission of permissions) {
      if (!hasPermission(actor, permission as never)) throw forbidden(`You cannot ${verb} the permission ${permission}, which you do not have`);
    }
  }
}

/**
 * Nor may they change or delete an account holding a permission they lack: that would take away
 * what they do not hold (docs/decisions.md, Administration).
 */
export async function assertCanManage(db: Executor, actor: PermissionSet, targetId: string): Promise<void> {
  const { permissions } = await loadAccess(db, targetId);
  for (const permission of [...permissions].sort()) {
    if (!hasPermission(actor, permission)) throw forbidden(`You cannot change an account holding the permission ${permission}, which you do not have`);
  }
}

/**
 * Administration changes that could leave nobody holding `administrator` run one at a time on
 * PostgreSQL (the lock account creation takes; SQLite runs one write transaction at a time), and
 * each checks before committing that somebody still holds it.
 */
export async function serializeAdministration(trx: Transaction<Database>, dialect: Dialect): Promise<void> {
  await serializeAccountCreation(trx, dialect);
}

/** Refuses (409) a change that leaves no account with the `administrator` permission. */
export async function assertAdministratorRemains(trx: Transaction<Database>): Promise<void> {
  const roles = await trx.selectFrom('roles').select(['id', 'systemKey', 'permissions']).execute();
  const granting = roles.filter((r) => parsePermissions(r.permissions).includes('administrator'));
  const everyone = granting.some((r) => r.systemKey === 'everyone');
  const holder = everyone
    ? await trx.selectFrom('users').select('id').limit(1).executeTakeFirst()
    : granting.length === 0
      ? undefined
      : await trx.selectFrom('userRoles').select('userId').where('roleId', 'in', granting.map((r) => r.id)).limit(1).executeTakeFirst();
  if (!holder) throw conflict('This would remove the last Administrator: at least one account must keep the administrator permission');
}

/**
 * What `roleIds` grant. `assigning`: they are being given to an account, which Everyone never is: it
 * applies to every account without being assigned, and an account listing it among its roles would
 * read as if the others did not have it.
 */
async function permissionsOfRoles(db: Executor, roleIds: string[], assigning: boolean): Promise<string[]> {
  if (roleIds.length === 0) return [];
  const unique = [...new Set(roleIds)];
  const rows = await db.selectFrom('roles').select(['id', 'permissions', 'systemKey']).where('id', 'in', unique).execute();
  if (rows.length !== unique.length) {
    const known = new Set(rows.map((r) => r.id));
    throw invalid(`roleIds: unknown role ${unique.find((id) => !known.has(id))}`);
  }
  if (assigning && rows.some((r) => r.systemKey === 'everyone')) throw invalid('roleIds: Everyone applies to every account without being assigned');
  return rows.flatMap((r) => parsePermissions(r.permissions));
}

export async function listUsers(db: Executor): Promise<AdminUser[]> {
  const users = await db.selectFrom('users').select([...userColumns, 'usedBytes', 'fileCount', 'totpSecretSealed', 'suspendedAt']).orderBy('createdAt', 'asc').orderBy('id').execute();
  const assignments = await db
    .selectFrom('userRoles')
    .innerJoin('roles', 'roles.id', 'userRoles.roleId')
    .select(['userRoles.userId', 'roles.id', 'roles.name', 'roles.systemKey', 'roles.permissions'])
    .execute();
  const quotas = await quotaContext(db);
  return users.map((u) => toAdminView(u, assignments.filter((a) => a.userId === u.id), quotas));
}

export async function getUserForAdmin(db: Executor, id: string): Promise<AdminUser> {
  const user = await findUserForAdmin(db, id);
  if (!user) throw notFound('User not found');
  return user;
}

/** An account as the administration shows it, or null when there is none of that ID. */
export async function findUserForAdmin(db: Executor, id: string): Promise<AdminUser | null> {
  const user = await db.selectFrom('users').select([...userColumns, 'usedBytes', 'fileCount', 'totpSecretSealed', 'suspendedAt']).where('id', '=', id).executeTakeFirst();
  if (!user) return null;
  const roles = await db
    .selectFrom('userRoles')
    .innerJoin('roles', 'roles.id', 'userRoles.roleId')
    .select(['roles.id', 'roles.name', 'roles.systemKey', 'roles.permissions'])
    .where('userRoles.userId', '=', id)
    .execute();
  return toAdminView(user, roles, await quotaContext(db));
}

/** What decides the quota each account is held to: the default, and Everyone's permissions. */
async function quotaContext(db: Executor): Promise<{ defaultQuotaBytes: number; everyoneBypasses: boolean }> {
  const everyone = await db.selectFrom('roles').select('permissions').where('systemKey', '=', 'everyone').executeTakeFirst();
  return { defaultQuotaBytes: (await readSettings(db)).defaultQuotaBytes, everyoneBypasses: everyone !== undefined && bypassesQuota(everyone.permissions) };
}

const bypassesQuota = (permissions: string) => hasPermission(new Set(parsePermissions(permissions)), 'quotas.bypass');

function toAdminView(
  user: UserRow & { usedBytes: number | string; fileCount: number | string; totpSecretSealed: string | null; suspendedAt: number | string | null },
  roles: Array<RoleSummary & { permissions: string }>,
  quotas: { defaultQuotaBytes: number; everyoneBypasses: boolean },
): AdminUser {
  // In the role list's order, whatever order the database's collation gives.
  const inOrder = [...roles].sort(rolesInOrder);
  const bypasses = quotas.everyoneBypasses || roles.some((role) => bypassesQuota(role.permissions));
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    urlId: user.urlId,
    emailVerified: user.emailVerified === 1,
    quotaBytes: user.quotaBytes,
    usedBytes: Number(user.usedBytes),
    fileCount: Number(user.fileCount),
    roles: inOrder.map(({ id, name, systemKey }) => ({ id, name, systemKey })),
    roleIds: inOrder.map((r) => r.id),
    twoFactorEnabled: user.totpSecretSealed !== null,
    quotaAppliedBytes: effectiveQuotaBytes(user.quotaBytes, quotas.defaultQuotaBytes, bypasses),
    suspendedAt: user.suspendedAt === null ? null : new Date(Number(user.suspendedAt)).toISOString(),
    createdAt: new Date(user.createdAt).toISOString(),
  };
}

export async function createUserAsAdmin(
  db: Db,
  dialect: Dialect,
  actor: PermissionSet,
  input: { email: string; password: string; name?: string | undefined; roleIds?: string[] | undefined; emailVerified?: boolean | undefined },
  also?: AlsoInTransaction<AdminUser>,
): Promise<AdminUser> {
  const roleIds = input.roleIds ?? [];
  assertCanGrant(actor, await permissionsOfRoles(db, roleIds, true));
  const passwordHash = await hashPassword(input.password);
  const user = await db.transaction().execute(async (trx) => {
    await serializeAccountCreation(trx, dialect);
    // An administrator creating the account vouches for the address.
    const made = await insertAccount(trx, { ...input, emailVerified: input.emailVerified ?? true, roleIds }, passwordHash);
    if (also) await also(trx, await getUserForAdmin(trx, made.id));
    return made;
  });
  return getUserForAdmin(db, user.id);
}

export async function updateUserAsAdmin(
  db: Db,
  dialect: Dialect,
  actor: { id: string; permissions: PermissionSet },
  id: string,
  changes: {
    name?: string | undefined;
    email?: string | undefined;
    roleIds?: string[] | undefined;
    emailVerified?: boolean | undefined;
    quotaBytes?: number | null | undefined;
    password?: string | undefined;
    suspended?: boolean | undefined;
  },
  also?: AlsoInTransaction<{ before: AdminUser; after: AdminUser }>,
): Promise<AdminUser> {
  if (changes.suspended !== undefined && actor.id === id) throw invalid('suspended: you cannot suspend your own account');
  // One's own address, like one's own password, changes in one's account settings, with the password.
  if (changes.email !== undefined && actor.id === id) {
    throw invalid('email: you cannot change your own email from the administration; change it in your account settings, with your password');
  }
  // One's own password changes in one's account settings, with the current one (PATCH
  // /api/account): else a stolen session of any account managing users would take the account.
  if (changes.password !== undefined && actor.id === id) {
    throw invalid('password: you cannot set your own password from the administration; change it in your account settings, with your current one');
  }
  const user = await findUserById(db, id);
  if (!user) throw notFound('User not found');
  await assertCanManage(db, actor.permissions, id);
  // A quota is set on an account, not by it: lifting one's own (0 is no quota) would be
  // quotas.bypass, which managing users does not include.
  if (changes.quotaBytes !== undefined && actor.id === id && !hasPermission(actor.permissions, 'quotas.bypass')) {
    throw forbidden('You cannot change your own quota without the permission quotas.bypass');
  }
  // A quota of 0 is no quota: exempting any account from quotas is what quotas.bypass grants, and
  // nobody grants what they do not hold (else users.manage could make an account of its own and
  // lift its quota). Back to the instance default (null) or any limit is managing users.
  if (changes.quotaBytes === 0 && !hasPermission(actor.permissions, 'quotas.bypass')) {
    throw forbidden('You cannot remove the quota of an account without the permission quotas.bypass');
  }
  // Nor may it raise one above the instance default: a limit of 2^53 - 1 bytes lifts the quota as
  // surely as 0 does. Up to the default (or any limit, where the default is no quota), or below
  // the account's own larger limit or none (which an administrator set), it restricts.
  if (changes.quotaBytes && !hasPermission(actor.permissions, 'quotas.bypass')) {
    const { defaultQuotaBytes } = await readSettings(db);
    const own = user.quotaBytes === null ? null : Number(user.quotaBytes);
    const lowering = own !== null && (own === 0 || changes.quotaBytes <= own);
    if (defaultQuotaBytes > 0 && changes.quotaBytes > defaultQuotaBytes && !lowering) {
      throw forbidden(`You cannot set a quota above the instance default (${defaultQuotaBytes} bytes) without the permission quotas.bypass`);
    }
  }
  if (changes.roleIds !== undefined) {
    const current = await db.selectFrom('userRoles').select('roleId').where('userId', '=', id).execute();
    const currentIds = new Set(current.map((r) => r.roleId));
    // Only what changes hands needs the actor's own permissions, in both directions.
    const added = changes.roleIds.filter((r) => !currentIds.has(r));
    const removed = [...currentIds].filter((r) => !changes.roleIds!.includes(r));
    assertCanGrant(actor.permissions, await permissionsOfRoles(db, added, true), await permissionsOfRoles(db, removed, false));
  }
  // Hashing is slow; it happens before the transaction so no lock is held meanwhile.
  const passwordHash = changes.password === undefined ? undefined : await hashPassword(changes.password);
  await db.transaction().execute(async (trx) => {
    if (changes.roleIds !== undefined) await serializeAdministration(trx, dialect);
    const before = also ? await getUserForAdmin(trx, id) : null;
    const set: Partial<{ name: string; email: string; emailVerified: number; quotaBytes: number | null; passwordHash: string; updatedAt: number }> = { updatedAt: Date.now() };
    if (changes.name !== undefined) set.name = changes.name.trim();
    if (changes.email !== undefined) {
      set.email = await claimEmail(trx, dialect, id, changes.email);
      // An administrator giving an address vouches for it, as for an account it creates.
      if (set.email !== user.email) set.emailVerified = 1;
    }
    if (changes.emailVerified !== undefined) set.emailVerified = changes.emailVerified ? 1 : 0;
    if (changes.quotaBytes !== undefined) set.quotaBytes = changes.quotaBytes;
    if (passwordHash !== undefined) set.passwordHash = passwordHash;
    await trx.updateTable('users').set(set).where('id', '=', id).execute();
    // A password set for someone ends every browser session of theirs, as changing one's own ends
    // the others; named tokens and the legacy credential stay (spec, Authentication 10).
    if (passwordHash !== undefined) await forAccount(trx, id).deleteFrom('sessions').execute();
    if (changes.roleIds !== undefined) {
      await trx.deleteFrom('userRoles').where('userId', '=', id).execute();
      const roleIds = [...new Set(changes.roleIds)];
      if (roleIds.length > 0) await trx.insertInto('userRoles').values(roleIds.map((roleId) => ({ userId: id, roleId }))).execute();
      await assertAdministratorRemains(trx);
    }
    if (changes.suspended !== undefined) await setSuspended(trx, dialect, id, changes.suspended);
    if (also) await also(trx, { before: before!, after: await getUserForAdmin(trx, id) });
  });
  // Who forgot a password has often locked the sign-in by trying: the new one works at once, from
  // every address (their failures on the account go; those counted on an address alone stay).
  if (passwordHash !== undefined) {
    await clearHitsStartingWith(db, accountSignInKeys(user.email));
    // And the wrong current passwords counted on it: else the temporary password could not be
    // replaced with one of the user's own for as long.
    await clearHits(db, passwordChangeKey(id));
  }
  return getUserForAdmin(db, id);
}

/**
 * Suspends or resumes an account (docs/decisions.md, "Suspending an account"). Suspended, it keeps
 * everything but can do nothing: its sessions end now, and its sign-ins, tokens and legacy
 * credential are refused until it is resumed. An account holding the administrator permission is
 * not suspended (its role goes first): the instance would keep an administrator who cannot act.
 */
async function setSuspended(trx: Transaction<Database>, dialect: Dialect, id: string, suspended: boolean): Promise<void> {
  if (suspended) {
    await serializeAdministration(trx, dialect);
    const { permissions } = await loadAccess(trx, id);
    if (permissions.has('administrator')) throw conflict('suspended: this account holds the administrator permission; take its Administrator role away first');
  }
  // A suspension keeps its first time; resuming clears it.
  const set = suspended ? { suspendedAt: sql<number>`coalesce(${sql.ref('suspendedAt')}, ${Date.now()})` } : { suspendedAt: null };
  await trx.updateTable('users').set(set).where('id', '=', id).execute();
  if (suspended) await forAccount(trx, id).deleteFrom('sessions').execute();
}

/** `also` is given the account as it stood before its files began to go, with the account's deletion. */
export async function deleteUserAsAdmin(db: Db, dialect: Dialect, actor: { id: string; permissions: PermissionSet }, id: string, also?: AlsoInTransaction<AdminUser>): Promise<void> {
  if (actor.id === id) throw invalid('You cannot delete your own account from the administration');
  const before = await findUserForAdmin(db, id);
  if (!before) throw notFound('User not found');
  await assertCanManage(db, actor.permissions, id);
  await deleteAccount(db, dialect, id, also && ((trx) => also(trx, before)));
}

/**
 * The account and everything it owns, once the caller was allowed to delete it (an administrator,
 * or the account itself with its password). Refused (409) where no administrator would remain.
 */
export async function deleteAccount(db: Db, dialect: Dialect, id: string, also?: (trx: Transaction<Database>) => Promise<void>): Promise<void> {
  // Before any file goes, the account gives up its roles, under the same check its deletion makes:
  // a deletion that would leave no administrator is refused (409) here, with the account whole.
  // Two administrators deleting each other at once: the second is refused here, not after its
  // batches had deleted the other's files. Should the process end before the account is gone, it
  // stays, without its roles, for the deletion to be asked again.
  await db.transaction().execute(async (trx) => {
    await serializeAdministration(trx, dialect);
    await trx.deleteFrom('userRoles').where('userId', '=', id).execute();
    await assertAdministratorRemains(trx);
  });
  // The files first, a batch at a time, each batch with the jobs that remove its bytes. An account
  // whose deletion stops half-way (the process ended) keeps the rest of its files, consistently:
  // its quota charge goes down with each batch. What remains, and files uploaded meanwhile, go with
  // the account below.
  await inBatches(dialect, (rows) => removeFilesOfAccount(db, dialect, id, rows));
  const deleted = await db.transaction().execute(async (trx) => {
    await serializeAdministration(trx, dialect);
    // The account's row first, as every upload's commit takes it (charging the quota): a commit under
    // way ends before the files are read below, and its file is among them; one that comes after
    // finds no account. Read before the lock, a file committed in between went with the account by
    // cascade while its bytes, whose cleanup its commit had cancelled, stayed in storage for good.
    await lockAccountRow(trx, dialect, id);
    // The records go with the account (foreign keys cascade); their bytes are removed by durable
    // jobs committed in the same transaction, so nothing stays in storage without a record.
    const files = await trx.selectFrom('files').select(['storageKey', 'thumbnailKey']).where('userId', '=', id).execute();
    // Unfinished chunked uploads keep parts in storage (local temporary files, S3 multipart uploads).
    const openSessions = await trx.selectFrom('chunkSessions').select(['fileKey', 'storageUploadId', 'storageTarget']).where('userId', '=', id).where('state', '!=', 'completed').execute();
    await withdrawInvitesOf(trx, id);
    const result = await trx.deleteFrom('users').where('id', '=', id).executeTakeFirst();
    if (Number(result.numDeletedRows) === 0) return false;
    await assertAdministratorRemains(trx);
    const now = Date.now();
    await scheduleStorageDeletes(trx, storageKeysOf(files), now);
    await scheduleSessionStorageAbort(trx, openSessions, now);
    if (also) await also(trx);
    return true;
  });
  if (!deleted) throw notFound('User not found');
}

/** The keys of files' bytes and thumbnails. */
function storageKeysOf(files: ReadonlyArray<{ storageKey: string; thumbnailKey: string | null }>): string[] {
  return files.flatMap((file) => (file.thumbnailKey === null ? [file.storageKey] : [file.storageKey, file.thumbnailKey]));
}

/** Removes up to `rows` of an account's files in one transaction; returns how many. */
async function removeFilesOfAccount(db: Db, dialect: Dialect, userId: string, rows: number): Promise<number> {
  return db.transaction().execute(async (trx) => {
    await lockAccountRow(trx, dialect, userId);
    // Any of them, in the order of the account's index: sorted, every batch would sort all that are left.
    const files = await forAccount(trx, userId).selectFrom('files').select(['id', 'size', 'storageKey', 'thumbnailKey']).limit(rows).execute();
    if (files.length === 0) return 0;
    // By ID: offered the account's index, SQLite would walk all of the account's files for each batch.
    await forAccount(trx, userId, { notByOwnerIndex: dialect === 'sqlite' }).deleteFrom('files').where('id', 'in', files.map((file) => file.id)).execute();
    const bytes = files.reduce((sum, file) => sum + Number(file.size), 0);
    await trx.updateTable('users').set((eb) => ({ usedBytes: eb('usedBytes', '-', bytes) })).where('id', '=', userId).execute();
    await scheduleStorageDeletes(trx, storageKeysOf(files), Date.now());
    return files.length;
  });
}

