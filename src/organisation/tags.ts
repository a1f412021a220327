import type { Db, Dialect } from '../db/database.ts';
import { forAccount, type Executor } from '../db/account-scope.ts';
import { newId } from '../db/ids.ts';
import { lockAccountRow } from '../db/locks.ts';
import { inBatches } from '../db/batches.ts';
import { isUniqueViolation } from '../db/unique-violation.ts';
import { parseStoredOptions } from '../shared/upload-options.ts';
import { conflict, invalid, notFound } from '../errors.ts';
import { iso, parseField } from './common.ts';
import { byName, sameName } from '../shared/name-order.ts';
import { nameSchema } from '../shared/display-name.ts';

export const tagLimits = {
  nameLength: 50,
  /** Tags an account may have: every Files page and upload form lists them all (docs/decisions.md, "Caps per account"). */
  perAccount: 1000,
} as const;
export const tagNameSchema = nameSchema(tagLimits.nameLength);

export type { Tag as TagView } from '../api/tags.ts';
import type { Tag as TagView } from '../api/tags.ts';

const tagColumns = ['id', 'name', 'createdAt'] as const;

function toView(row: { id: string; name: string; createdAt: number }): TagView {
  return { id: row.id, name: row.name, createdAt: iso(row.createdAt) };
}

/** The account's tags sorted by name (natural, case-insensitive order). */
export async function listTags(db: Executor, userId: string): Promise<TagView[]> {
  const rows = await forAccount(db, userId).selectFrom('tags').select(tagColumns).execute();
  return rows.sort(byName).map(toView);
}

/**
 * Throws a 400 naming `field` unless every ID is a tag of the account. Another account's tag is
 * reported exactly like a missing one.
 */
export async function assertOwnedTags(db: Executor, userId: string, tagIds: readonly string[], field = 'tagIds'): Promise<void> {
  const unique = [...new Set(tagIds)];
  if (unique.length === 0) return;
  const rows = await forAccount(db, userId).selectFrom('tags').select('id').where('id', 'in', unique).execute();
  if (rows.length === unique.length) return;
  const owned = new Set(rows.map((r) => r.id));
  const missing = unique.find((id) => !owned.has(id))!;
  throw invalid(`${field}: no tag with ID "${missing}" belongs to your account`);
}

// Names are unique per account regardless of case. The database constraint covers exact duplicates;
// the case-insensitive check runs under the account lock, so concurrent requests cannot both pass it.
async function assertNameFree(db: Executor, userId: string, name: string, exceptId: string | null): Promise<void> {
  const rows = await forAccount(db, userId).selectFrom('tags').select(['id', 'name']).execute();
  if (exceptId === null && rows.length >= tagLimits.perAccount) throw conflict(`An account can have at most ${tagLimits.perAccount} tags; delete one first`);
  const clash = rows.find((r) => r.id !== exceptId && sameName(r.name, name));
  if (clash) throw conflict(`name: you already have a tag named "${clash.name}"`);
}

export async function createTag(db: Db, dialect: Dialect, userId: string, name: string): Promise<TagView> {
  const clean = parseField(tagNameSchema, name, 'name');
  try {
    return await db.transaction().execute(async (trx) => {
      await lockAccountRow(trx, dialect, userId);
      await assertNameFree(trx, userId, clean, null);
      const row = { id: newId(), name: clean, createdAt: Date.now() };
      await forAccount(trx, userId).insertInto('tags', row).execute();
      return toView(row);
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict(`name: you already have a tag named "${clean}"`);
    throw error;
  }
}

export async function renameTag(db: Db, dialect: Dialect, userId: string, id: string, name: string): Promise<TagView> {
  const clean = parseField(tagNameSchema, name, 'name');
  try {
    return await db.transaction().execute(async (trx) => {
      await lockAccountRow(trx, dialect, userId);
      const account = forAccount(trx, userId);
      const existing = await account.selectFrom('tags').select(tagColumns).where('id', '=', id).executeTakeFirst();
      if (!existing) throw notFound('Tag not found');
      await assertNameFree(trx, userId, clean, id);
      if (existing.name !== clean) await account.updateTable('tags').set({ name: clean }).where('id', '=', id).execute();
      return toView({ ...existing, name: clean });
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict(`name: you already have a tag named "${clean}"`);
    throw error;
  }
}

/**
 * Deletes a tag: its file assignments go with it, and it is taken out of every upload profile and
 * the account's upload defaults, so those keep working. The assignments go a batch at a time first
 * (src/db/batches.ts); the rest (foreign-key cascade) and the tag itself in one transaction. Should
 * the process end half-way, the tag is still there on the files not yet reached, and deleting it
 * again finishes.
 */
export async function deleteTag(db: Db, dialect: Dialect, userId: string, id: string): Promise<void> {
  await inBatches(dialect, (rows) =>
    db.transaction().execute(async (trx) => {
      await lockAccountRow(trx, dialect, userId);
      // Only the account's own tag: its assignments are the account's.
      const tag = await forAccount(trx, userId).selectFrom('tags').select('id').where('id', '=', id).executeTakeFirst();
      if (!tag) return 0;
      const assigned = await trx.selectFrom('fileTags').select('fileId').where('tagId', '=', tag.id).limit(rows).execute();
      if (assigned.length > 0) await trx.deleteFrom('fileTags').where('tagId', '=', tag.id).where('fileId', 'in', assigned.map((row) => row.fileId)).execute();
      return assigned.length;
    }),
  );
  await db.transaction().execute(async (trx) => {
    await lockAccountRow(trx, dialect, userId);
    const account = forAccount(trx, userId);
    const result = await account.deleteFrom('tags').where('id', '=', id).executeTakeFirst();
    if (Number(result.numDeletedRows) === 0) throw notFound('Tag not found');

    const profiles = await account.selectFrom('uploadProfiles').select(['id', 'options']).execute();
    const now = Date.now();
    for (const profile of profiles) {
      const options = parseStoredOptions(profile.options);
      if (!options.tagIds?.includes(id)) continue;
      const next = { ...options, tagIds: options.tagIds.filter((t) => t !== id) };
      await account.updateTable('uploadProfiles').set({ options: JSON.stringify(next), updatedAt: now }).where('id', '=', profile.id).execute();
    }

    // The account row itself (not an account-owned table): its own upload defaults.
    const user = await trx.selectFrom('users').select('uploadDefaults').where('id', '=', userId).executeTakeFirst();
    const defaults = parseStoredOptions(user?.uploadDefaults ?? null);
    if (defaults.tagIds?.includes(id)) {
      const next = { ...defaults, tagIds: defaults.tagIds.filter((t) => t !== id) };
      await trx.updateTable('users').set({ uploadDefaults: JSON.stringify(next) }).where('id', '=', userId).execute();
    }
  });
}
