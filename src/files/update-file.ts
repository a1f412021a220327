import type { AppContext } from '../context.ts';
import { forAccount, type Executor } from '../db/account-scope.ts';
import { lockAccountRow } from '../db/locks.ts';
import { isUniqueViolation } from '../db/unique-violation.ts';
import type { ExpiryAction, Visibility } from '../db/schema.ts';
import { hasPermission, type PermissionSet } from '../auth/permissions.ts';
import { hashPassword } from '../auth/passwords.ts';
import { findOwnedFolder } from '../organisation/folders.ts';
import { assertOwnedTags } from '../organisation/tags.ts';
import { keptFileName } from '../shared/naming.ts';
import { accountGone, conflict, forbidden, invalid, notFound } from '../errors.ts';
import { cancelExpiry, scheduleExpiry } from './expiry.ts';
import { fileRecord } from './file-views.ts';
import { foldForSearch } from '../shared/search-text.ts';

export interface FileChanges {
  name?: string | undefined;
  visibility?: Visibility | undefined;
  password?: string | null | undefined;
  expiresAt?: Date | null | undefined;
  expiryAction?: ExpiryAction | undefined;
  folderId?: string | null | undefined;
  tagIds?: string[] | undefined;
}

/** The tags that count for each file: excluded ones are left out (`fileRecord` orders them). */
export async function tagsOfFiles(db: Executor, fileIds: string[]): Promise<Map<string, Array<{ id: string; name: string }>>> {
  const byFile = new Map<string, Array<{ id: string; name: string }>>();
  if (fileIds.length === 0) return byFile;
  const rows = await db
    .selectFrom('fileTags')
    .innerJoin('tags', 'tags.id', 'fileTags.tagId')
    .select(['fileTags.fileId', 'tags.id', 'tags.name'])
    .where('fileTags.fileId', 'in', fileIds)
    .where('fileTags.excluded', '=', 0)
    .execute();
  for (const row of rows) {
    const list = byFile.get(row.fileId) ?? [];
    list.push({ id: row.id, name: row.name });
    byFile.set(row.fileId, list);
  }
  return byFile;
}

/** One file as the listing shows it, for the owner. */
export async function describeFile(ctx: AppContext, userId: string, fileId: string) {
  const account = forAccount(ctx.db, userId);
  const file = await account.selectFrom('files').selectAll().where('id', '=', fileId).executeTakeFirst();
  if (!file) throw notFound('File not found');
  const owner = await ctx.db.selectFrom('users').select('urlId').where('id', '=', userId).executeTakeFirstOrThrow(accountGone);
  const tags = (await tagsOfFiles(ctx.db, [file.id])).get(file.id) ?? [];
  return fileRecord({ ...file, hasPassword: file.passwordHash !== null }, owner.urlId, tags, ctx.config.baseUrl);
}

/** PATCH /api/files/{id}: the contract's permission rules per field, then one transaction. */
export async function updateFile(ctx: AppContext, userId: string, permissions: PermissionSet, fileId: string, changes: FileChanges) {
  const can = (p: Parameters<typeof hasPermission>[1]) => hasPermission(permissions, p);
  const account = forAccount(ctx.db, userId);
  const file = await account.selectFrom('files').select(['id', 'name', 'expiresAt', 'expiryAction']).where('id', '=', fileId).executeTakeFirst();
  if (!file) throw notFound('File not found');

  if ((changes.visibility !== undefined || changes.password !== undefined) && !can('files.share')) throw forbidden();
  const touchesExpiry = changes.expiresAt !== undefined || changes.expiryAction !== undefined;
  const expiresAt = changes.expiresAt === undefined ? file.expiresAt : changes.expiresAt === null ? null : changes.expiresAt.getTime();
  const expiryAction = expiresAt === null ? null : (changes.expiryAction ?? file.expiryAction ?? 'DELETE');
  if (touchesExpiry) {
    if (changes.expiresAt && changes.expiresAt.getTime() <= Date.now()) throw invalid('expiresAt: must be in the future');
    if (changes.expiryAction !== undefined && expiresAt === null) throw invalid('expiryAction: the file has no expiry; give expiresAt too');
    const allowed = expiryAction === 'DELETE' ? can('files.delete') : expiryAction === 'SET_PRIVATE' ? can('files.share') : can('files.share') || can('files.delete');
    if (!allowed) throw forbidden();
  }
  if (changes.folderId !== undefined) {
    if (!can('folders.manage')) throw forbidden();
    if (changes.folderId !== null && !(await findOwnedFolder(ctx.db, userId, changes.folderId))) throw notFound('Folder not found');
  }
  if (changes.tagIds !== undefined) {
    if (!can('tags.manage')) throw forbidden();
    await assertOwnedTags(ctx.db, userId, changes.tagIds);
  }
  // Half of an emoji alone (JSON can spell one) is no text: stored, it became a replacement character.
  if (changes.name !== undefined && !changes.name.isWellFormed()) throw invalid('name: must be valid Unicode text (it holds half of a character, a lone surrogate)');
  const name = changes.name !== undefined ? keptFileName(changes.name) : undefined;
  // A new name must keep something: "   " or "???" became "file", and the file lost its extension.
  if (name === null) throw invalid('name: must contain a letter, a digit or another character a file name keeps, not only spaces, dots, dashes, underscores or punctuation');
  const nameTaken = () => conflict(`A file named ${name} already exists`);
  const passwordHash = changes.password ? await hashPassword(changes.password) : changes.password === null || changes.password === '' ? null : undefined;

  await ctx.db.transaction().execute(async (trx) => {
    const scoped = forAccount(trx, userId);
    // The account's lock first, whatever changes: the file's change takes it anyway, through the
    // count triggers, after the file's row; renames, deletions and folder changes take it before.
    // Taken in both orders the two deadlocked on PostgreSQL (docs/decisions.md, "Organisation").
    // Uploads take it too to choose their names (src/uploads/commit-file.ts), so a rename's check
    // below holds until the commit.
    await lockAccountRow(trx, ctx.dialect, userId);
    if (name !== undefined && name !== file.name) {
      if (await scoped.selectFrom('files').select('id').where('name', '=', name).where('id', '<>', fileId).executeTakeFirst()) throw nameTaken();
    }
    try {
      await scoped
        .updateTable('files')
        .set({
          updatedAt: Date.now(),
          ...(name !== undefined ? { name, searchName: foldForSearch(name) } : {}),
          ...(changes.visibility !== undefined ? { visibility: changes.visibility } : {}),
          ...(passwordHash !== undefined ? { passwordHash } : {}),
          ...(touchesExpiry ? { expiresAt, expiryAction } : {}),
          ...(changes.folderId !== undefined ? { folderId: changes.folderId } : {}),
        })
        .where('id', '=', fileId)
        .execute();
    } catch (error) {
      // The names' unique constraint (files_userId_name) is the last word, whatever took the name.
      if (name !== undefined && isUniqueViolation(error)) throw nameTaken();
      throw error;
    }
    if (touchesExpiry) {
      if (expiresAt === null) await cancelExpiry(trx, fileId);
      else await scheduleExpiry(trx, fileId, expiresAt);
    }
    if (changes.tagIds !== undefined) {
      const wanted = new Set(changes.tagIds);
      const current = await trx.selectFrom('fileTags').select(['tagId', 'excluded']).where('fileId', '=', fileId).execute();
      for (const row of current) {
        const excluded = wanted.has(row.tagId) ? 0 : 1;
        if (row.excluded !== excluded) await trx.updateTable('fileTags').set({ excluded }).where('fileId', '=', fileId).where('tagId', '=', row.tagId).execute();
        wanted.delete(row.tagId);
      }
      if (wanted.size) await trx.insertInto('fileTags').values([...wanted].map((tagId) => ({ fileId, tagId }))).execute();
    }
  });
  return describeFile(ctx, userId, fileId);
}
