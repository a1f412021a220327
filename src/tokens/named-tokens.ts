import { lockAccountRow } from '../db/locks.ts';
import type { Db, Dialect } from '../db/database.ts';
import { forAccount, type AccountScope, type Executor } from '../db/account-scope.ts';
import { newId } from '../db/ids.ts';
import { randomSecret, sha256Hex } from '../auth/secrets.ts';
import type { Scope } from '../auth/route-policy.ts';
import { parseScopes, SECRET_PREFIX, tokenStatus } from '../auth/token-format.ts';
import type { TokenList, TokenRecord } from '../api/tokens.ts';
import { conflict, invalid, notFound } from '../errors.ts';
import { nameSchema } from '../shared/display-name.ts';

/** Active named tokens per account: 50, expired and revoked not counted; token name 1 to 80; latest 100 shown (spec, Limits). */
export const tokenLimits = {
  activePerAccount: 50,
  listed: 100,
  nameLength: 80,
} as const;

/** A token's name, as the token routes and the command-line tool take it. */
export const tokenNameSchema = nameSchema(tokenLimits.nameLength);

export interface TokenRow {
  id: string;
  userId: string;
  name: string;
  scopes: string;
  profileId: string | null;
  expiresAt: number | null;
  revokedAt: number | null;
  lastUsedAt: number | null;
  createdAt: number;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function toTokenRecord(row: TokenRow, now = Date.now()): TokenRecord {
  return {
    id: row.id,
    name: row.name,
    scopes: parseScopes(row.scopes),
    profileId: row.profileId,
    expiresAt: iso(row.expiresAt),
    revokedAt: iso(row.revokedAt),
    lastUsedAt: iso(row.lastUsedAt),
    createdAt: iso(row.createdAt)!,
    status: tokenStatus(row, now),
  };
}

const tokenColumns = ['id', 'userId', 'name', 'scopes', 'profileId', 'expiresAt', 'revokedAt', 'lastUsedAt', 'createdAt'] as const;

export interface NewToken {
  name: string;
  scopes: Scope[];
  expiresAt?: Date | null | undefined;
  profileId?: string | null | undefined;
}

/** Bound upload profile: only for tokens with files:upload, of the same account (spec, Named API token). */
async function validate(account: AccountScope, input: NewToken, now: number): Promise<void> {
  // Characters, as the specification counts them (and zod does), not UTF-16 units.
  const name = tokenNameSchema.safeParse(input.name);
  if (!name.success) throw invalid(`name: ${name.error.issues[0]!.message}`);
  if (input.scopes.length === 0) throw invalid('scopes: at least one scope is required');
  if (new Set(input.scopes).size !== input.scopes.length) throw invalid('scopes: a scope is listed twice');
  if (input.expiresAt && input.expiresAt.getTime() <= now) throw invalid('expiresAt: must be in the future');
  if (input.profileId) {
    if (!input.scopes.includes('files:upload')) throw invalid('profileId: only a token with the files:upload scope can be bound to an upload profile');
    const profile = await account.selectFrom('uploadProfiles').select('id').where('id', '=', input.profileId).executeTakeFirst();
    if (!profile) throw invalid('profileId: no upload profile with this ID belongs to your account');
  }
}

async function insertToken(account: AccountScope, input: NewToken, now: number): Promise<{ row: TokenRow; secret: string }> {
  const secret = SECRET_PREFIX + randomSecret(32);
  const row: TokenRow = {
    id: newId(),
    userId: account.userId,
    name: input.name,
    scopes: JSON.stringify(input.scopes),
    profileId: input.profileId ?? null,
    expiresAt: input.expiresAt ? input.expiresAt.getTime() : null,
    revokedAt: null,
    lastUsedAt: null,
    createdAt: now,
  };
  const { userId: _owner, ...values } = row;
  await account.insertInto('apiTokens', { ...values, secretHash: sha256Hex(secret) }).execute();
  return { row, secret };
}

async function countActive(account: AccountScope, now: number): Promise<number> {
  const { count } = await account
    .selectFrom('apiTokens')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('revokedAt', 'is', null)
    .where((eb) => eb.or([eb('expiresAt', 'is', null), eb('expiresAt', '>', now)]))
    .executeTakeFirstOrThrow();
  return Number(count);
}

/** Creates a token; the secret is shown once at creation and only its hash is stored (spec, Named API token). */
export async function createToken(db: Db, dialect: Dialect, userId: string, input: NewToken): Promise<{ token: TokenRecord; secret: string }> {
  const now = Date.now();
  await validate(forAccount(db, userId), input, now);
  return db.transaction().execute(async (trx) => {
    await lockAccountRow(trx, dialect, userId);
    const account = forAccount(trx, userId);
    if ((await countActive(account, now)) >= tokenLimits.activePerAccount) {
      throw conflict(`An account can have at most ${tokenLimits.activePerAccount} active tokens; revoke one first`);
    }
    const { row, secret } = await insertToken(account, input, now);
    return { token: toTokenRecord(row, now), secret };
  });
}

export async function listTokens(db: Db, userId: string): Promise<TokenList> {
  const now = Date.now();
  const account = forAccount(db, userId);
  const newest = () => account.selectFrom('apiTokens').select(tokenColumns).orderBy('createdAt', 'desc').orderBy('id', 'desc');
  // The latest records (spec, Limits; contract §3), and apart from them every active token older
  // than those: the owner must be able to find every token that still works in order to revoke it,
  // however many newer ones were revoked (docs/decisions.md, "Every active token is listed").
  const latest = await newest().limit(tokenLimits.listed).execute();
  const active = await newest()
    .where('revokedAt', 'is', null)
    .where((eb) => eb.or([eb('expiresAt', 'is', null), eb('expiresAt', '>', now)]))
    .limit(tokenLimits.activePerAccount + tokenLimits.listed)
    .execute();
  const latestIds = new Set(latest.map((r) => r.id));
  return {
    tokens: latest.map((r) => toTokenRecord(r, now)),
    olderActive: active.filter((r) => !latestIds.has(r.id)).map((r) => toTokenRecord(r, now)),
    activeCount: active.length,
    limit: tokenLimits.activePerAccount,
  };
}

/** A new secret for the same name, scopes, profile and expiry; the old token is revoked in the same step. */
export async function rotateToken(db: Db, dialect: Dialect, userId: string, id: string): Promise<{ token: TokenRecord; secret: string }> {
  const now = Date.now();
  return db.transaction().execute(async (trx) => {
    await lockAccountRow(trx, dialect, userId);
    const account = forAccount(trx, userId);
    const old = await account.selectFrom('apiTokens').select(tokenColumns).where('id', '=', id).executeTakeFirst();
    if (!old) throw notFound('Token not found');
    const status = tokenStatus(old, now);
    if (status !== 'active') throw conflict(`This token is ${status}; only an active token can be rotated`);
    // Its uploads are refused while its profile is gone: a new secret for it would never work.
    if (old.profileId !== null && !(await account.selectFrom('uploadProfiles').select('id').where('id', '=', old.profileId).executeTakeFirst())) {
      throw conflict('The upload profile this token is bound to no longer exists: create a new token instead, bound to another profile or to none');
    }
    await account.updateTable('apiTokens').set({ revokedAt: now }).where('id', '=', id).execute();
    const { row, secret } = await insertToken(
      account,
      { name: old.name, scopes: parseScopes(old.scopes), profileId: old.profileId, expiresAt: old.expiresAt === null ? null : new Date(old.expiresAt) },
      now,
    );
    return { token: toTokenRecord(row, now), secret };
  });
}

/**
 * Revoking twice is harmless; the first revocation time is kept. Under the account's lock, which an
 * upload's commit holds from its quota charge on: a chunked upload's completion, whose check of its
 * token is in that commit, is then either committed before the revocation (and its file made before
 * the revocation time) or refused with 403, never committed after a revocation already answered.
 */
export async function revokeToken(db: Db, dialect: Dialect, userId: string, id: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await lockAccountRow(trx, dialect, userId);
    const account = forAccount(trx, userId);
    const existing = await account.selectFrom('apiTokens').select(['id', 'revokedAt']).where('id', '=', id).executeTakeFirst();
    if (!existing) throw notFound('Token not found');
    if (existing.revokedAt === null) await account.updateTable('apiTokens').set({ revokedAt: Date.now() }).where('id', '=', id).execute();
  });
}

/**
 * Re-checked in every upload's commit: the token may have been revoked or expired meanwhile (spec,
 * Errors: 403).
 */
export async function isTokenActive(db: Executor, tokenId: string): Promise<boolean> {
  const row = await db.selectFrom('apiTokens').select(['expiresAt', 'revokedAt']).where('id', '=', tokenId).executeTakeFirst();
  return row !== undefined && tokenStatus(row) === 'active';
}
