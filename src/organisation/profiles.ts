import type { Db, Dialect } from '../db/database.ts';
import { forAccount, type Executor } from '../db/account-scope.ts';
import { newId } from '../db/ids.ts';
import { lockAccountRow } from '../db/locks.ts';
import { parseStoredOptions, profileOptionsSchema, type ProfileOptions } from '../shared/upload-options.ts';
import { conflict, notFound } from '../errors.ts';
import { iso, parseField } from './common.ts';
import { byName } from '../shared/name-order.ts';
import { nameSchema } from '../shared/display-name.ts';
import { assertOwnedTags } from './tags.ts';

export const profileLimits = {
  nameLength: 80,
  /** Upload profiles an account may have (docs/decisions.md, "Caps per account"). */
  perAccount: 100,
} as const;
export const profileNameSchema = nameSchema(profileLimits.nameLength);

/** An upload profile as the API returns it. */
export type { UploadProfile as ProfileView } from '../api/organisation.ts';
import type { UploadProfile as ProfileView } from '../api/organisation.ts';

interface ProfileRow {
  id: string;
  name: string;
  options: string;
  createdAt: number;
  updatedAt: number;
}

const profileColumns = ['id', 'name', 'options', 'createdAt', 'updatedAt'] as const;

function toView(row: ProfileRow, defaultProfileId: string | null): ProfileView {
  return {
    id: row.id,
    name: row.name,
    options: parseStoredOptions(row.options),
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
    isDefault: row.id === defaultProfileId,
  };
}

/**
 * Validates upload options for storing (a profile's, or the account's defaults): the option schema,
 * and every tag ID must be a tag of the account (400 naming `<field>.tagIds`). Tag IDs are
 * deduplicated.
 */
export async function checkProfileOptions(db: Executor, userId: string, options: unknown, field: string): Promise<ProfileOptions> {
  const parsed = parseField(profileOptionsSchema, options, field);
  if (parsed.tagIds !== undefined) {
    await assertOwnedTags(db, userId, parsed.tagIds, `${field}.tagIds`);
    parsed.tagIds = [...new Set(parsed.tagIds)];
  }
  return parsed;
}

/** The account's default profile and its own upload defaults (contract §4, the "account's defaults"). */
export async function accountUploadDefaults(db: Executor, userId: string): Promise<{ defaultProfileId: string | null; uploadDefaults: ProfileOptions }> {
  // The account row itself, not an account-owned table.
  const row = await db.selectFrom('users').select(['defaultProfileId', 'uploadDefaults']).where('id', '=', userId).executeTakeFirst();
  return { defaultProfileId: row?.defaultProfileId ?? null, uploadDefaults: parseStoredOptions(row?.uploadDefaults ?? null) };
}

/** A profile of the account, or null when the ID is unknown or belongs to another account. */
export async function findOwnedProfile(db: Executor, userId: string, profileId: string): Promise<{ id: string; name: string; options: ProfileOptions } | null> {
  const row = await forAccount(db, userId).selectFrom('uploadProfiles').select(['id', 'name', 'options']).where('id', '=', profileId).executeTakeFirst();
  return row ? { id: row.id, name: row.name, options: parseStoredOptions(row.options) } : null;
}

/** The account's profiles sorted by name. */
export async function listProfiles(db: Executor, userId: string): Promise<ProfileView[]> {
  const rows = await forAccount(db, userId).selectFrom('uploadProfiles').select(profileColumns).execute();
  const { defaultProfileId } = await accountUploadDefaults(db, userId);
  return rows.sort(byName).map((r) => toView(r, defaultProfileId));
}

export async function createProfile(db: Db, dialect: Dialect, userId: string, input: { name: string; options: unknown }): Promise<ProfileView> {
  const name = parseField(profileNameSchema, input.name, 'name');
  return db.transaction().execute(async (trx) => {
    // Serialised with tag deletion, which rewrites the tag lists of profiles.
    await lockAccountRow(trx, dialect, userId);
    const { count } = await forAccount(trx, userId).selectFrom('uploadProfiles').select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
    if (Number(count) >= profileLimits.perAccount) throw conflict(`An account can have at most ${profileLimits.perAccount} upload profiles; delete one first`);
    const options = await checkProfileOptions(trx, userId, input.options, 'options');
    const now = Date.now();
    const row: ProfileRow = { id: newId(), name, options: JSON.stringify(options), createdAt: now, updatedAt: now };
    await forAccount(trx, userId).insertInto('uploadProfiles', row).execute();
    return toView(row, null);
  });
}

/** Renames a profile and/or replaces its options object as a whole. */
export async function updateProfile(db: Db, dialect: Dialect, userId: string, id: string, changes: { name?: string | undefined; options?: unknown }): Promise<ProfileView> {
  const name = changes.name === undefined ? undefined : parseField(profileNameSchema, changes.name, 'name');
  return db.transaction().execute(async (trx) => {
    await lockAccountRow(trx, dialect, userId);
    const account = forAccount(trx, userId);
    const existing = await account.selectFrom('uploadProfiles').select(profileColumns).where('id', '=', id).executeTakeFirst();
    if (!existing) throw notFound('Upload profile not found');
    const next: ProfileRow = { ...existing };
    if (name !== undefined) next.name = name;
    if (changes.options !== undefined) next.options = JSON.stringify(await checkProfileOptions(trx, userId, changes.options, 'options'));
    if (next.name !== existing.name || next.options !== existing.options) {
      next.updatedAt = Math.max(Date.now(), Number(existing.updatedAt));
      await account.updateTable('uploadProfiles').set({ name: next.name, options: next.options, updatedAt: next.updatedAt }).where('id', '=', id).execute();
    }
    const { defaultProfileId } = await accountUploadDefaults(trx, userId);
    return toView(next, defaultProfileId);
  });
}

/**
 * Deletes a profile. Tokens bound to it stay bound (and their uploads fail until they are rebound,
 * spec Authentication 8); the account's default profile is cleared when it was this one.
 */
export async function deleteProfile(db: Db, dialect: Dialect, userId: string, id: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await lockAccountRow(trx, dialect, userId);
    const result = await forAccount(trx, userId).deleteFrom('uploadProfiles').where('id', '=', id).executeTakeFirst();
    if (Number(result.numDeletedRows) === 0) throw notFound('Upload profile not found');
    // The account row itself, not an account-owned table.
    await trx.updateTable('users').set({ defaultProfileId: null }).where('id', '=', userId).where('defaultProfileId', '=', id).execute();
  });
}
