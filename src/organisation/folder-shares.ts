import { sql, type ExpressionBuilder, type Selectable } from 'kysely';
import type { Db } from '../db/database.ts';
import { forAccount, type Executor } from '../db/account-scope.ts';
import { randomLowerAlnum } from '../db/ids.ts';
import { invalid, notFound } from '../errors.ts';
import type { Database, FilesTable } from '../db/schema.ts';
import type { FolderShare } from '../api/organisation.ts';
import { iso } from './common.ts';
import { folderSubtree } from './folders.ts';

/**
 * A folder shared by a public address, `/folder/{shareId}` (docs/decisions.md, "Sharing a folder"):
 * anyone with the address sees the folder's own files (and, when the share says so, its
 * subfolders') that its owner shares with anyone already, each linking to its own share page.
 * Private, password-protected and expired files are not listed, so sharing a folder makes nothing
 * public that was not: it gathers what was. The address is 16 random characters (82 bits), not to
 * be guessed.
 */
export const SHARE_ID_LENGTH = 16;
/** Files a page of a shared folder lists. */
export const FOLDER_PAGE_FILES = 60;
/**
 * Files the ZIP of a shared folder holds at most: a visitor's download of them all in one go. More
 * are downloaded one by one (docs/decisions.md, "Sharing a folder").
 */
export const FOLDER_ZIP_FILES = 1000;

const urlOf = (baseUrl: string, shareId: string) => `${baseUrl}/folder/${shareId}`;
const toShare = (baseUrl: string, row: { shareId: string; createdAt: number; expiresAt: number | null; subfolders: number }): FolderShare => ({
  url: urlOf(baseUrl, row.shareId),
  createdAt: iso(row.createdAt),
  expiresAt: row.expiresAt === null ? null : iso(row.expiresAt),
  subfolders: row.subfolders === 1,
});
const shareColumns = ['shareId', 'createdAt', 'expiresAt', 'subfolders'] as const;

/** What a share is made or changed with; a field left out keeps the share's own (on a new share: no end, this folder alone). */
export interface ShareOptions {
  /** When the address stops working (an instant to come), or null for never. */
  expiresAt?: Date | null | undefined;
  /** Whether the page lists the public files of the folders below too. */
  subfolders?: boolean | undefined;
}

/** A share whose address still works at `now`: one past its expiry has ended, as a stopped one has. */
const live = (now: number) => (eb: ExpressionBuilder<Database, 'folderShares'>) => eb.or([eb('folderShares.expiresAt', 'is', null), eb('folderShares.expiresAt', '>', now)]);

async function ownedFolder(db: Executor, userId: string, folderId: string): Promise<{ id: string; name: string }> {
  const folder = await forAccount(db, userId).selectFrom('folders').select(['id', 'name']).where('id', '=', folderId).executeTakeFirst();
  if (!folder) throw notFound('Folder not found');
  return folder;
}

/** The folder's public address, or null when it is not shared. 404 for a folder the account lacks. */
export async function folderShareOf(db: Db, baseUrl: string, userId: string, folderId: string, now = Date.now()): Promise<FolderShare | null> {
  await ownedFolder(db, userId, folderId);
  const row = await forAccount(db, userId).selectFrom('folderShares').select(shareColumns).where('folderId', '=', folderId).where(live(now)).executeTakeFirst();
  return row ? toShare(baseUrl, row) : null;
}

/** Every shared folder of the account with its address, so a list of folders can mark them. */
export async function listFolderShares(db: Db, baseUrl: string, userId: string, now = Date.now()): Promise<Array<FolderShare & { folderId: string }>> {
  const rows = await forAccount(db, userId).selectFrom('folderShares').select(['folderId', ...shareColumns]).where(live(now)).orderBy('createdAt').orderBy('folderId').execute();
  return rows.map((row) => ({ folderId: row.folderId, ...toShare(baseUrl, row) }));
}

/**
 * Shares the folder, or gives its address when it is shared already (`created` false). `options`
 * set when the address stops working and whether subfolders are listed, on a new share or on the
 * one there, which keeps its address. A share past its end has ended: sharing again makes a new
 * address, as after stopping.
 */
export async function shareFolder(db: Db, baseUrl: string, userId: string, folderId: string, options: ShareOptions = {}, now = Date.now()): Promise<{ share: FolderShare; created: boolean }> {
  if (options.expiresAt && options.expiresAt.getTime() <= now) throw invalid('expiresAt: must be in the future');
  const changes: { expiresAt?: number | null; subfolders?: number } = {};
  if (options.expiresAt !== undefined) changes.expiresAt = options.expiresAt === null ? null : options.expiresAt.getTime();
  if (options.subfolders !== undefined) changes.subfolders = options.subfolders ? 1 : 0;
  return db.transaction().execute(async (trx) => {
    await ownedFolder(trx, userId, folderId);
    const account = forAccount(trx, userId);
    // An ended share's row goes, so that the insert below makes a new address.
    await account.deleteFrom('folderShares').where('folderId', '=', folderId).where('expiresAt', '<=', now).execute();
    const row = { folderId, shareId: randomLowerAlnum(SHARE_ID_LENGTH), createdAt: now, expiresAt: changes.expiresAt ?? null, subfolders: changes.subfolders ?? 0 };
    // The primary key keeps one share a folder: shared already (or by a request at the same time),
    // the insert does nothing and the share there is the answer.
    const inserted = await account.insertInto('folderShares', row).onConflict((c) => c.column('folderId').doNothing()).executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1) return { share: toShare(baseUrl, row), created: true };
    if (Object.keys(changes).length > 0) await account.updateTable('folderShares').set(changes).where('folderId', '=', folderId).execute();
    const existing = await account.selectFrom('folderShares').select(shareColumns).where('folderId', '=', folderId).executeTakeFirstOrThrow();
    return { share: toShare(baseUrl, existing), created: false };
  });
}

/** Stops sharing the folder: its address answers 404 from now on. Nothing to stop is no mistake. */
export async function unshareFolder(db: Db, userId: string, folderId: string): Promise<void> {
  await ownedFolder(db, userId, folderId);
  await forAccount(db, userId).deleteFrom('folderShares').where('folderId', '=', folderId).execute();
}

export interface SharedFolderPage {
  folderName: string;
  /** When the address stops working, or null. */
  expiresAt: number | null;
  /** The owner's URL ID, for the files' links. The owner is not named, as a file's share page does not name them. */
  urlId: string;
  /** `subfolder`: the path of a subfolder's file from the shared folder (`Day 1 / Night`), else null. */
  files: Array<Pick<Selectable<FilesTable>, 'id' | 'name' | 'mimeType' | 'size' | 'createdAt' | 'thumbnailStatus' | 'thumbnailKey'> & { subfolder: string | null }>;
  total: number;
  /** The bytes of every listed file, when they can be had as one ZIP (1 to FOLDER_ZIP_FILES files); else null. */
  totalBytes: number | null;
  page: number;
  pageCount: number;
}

/** A share whose address works now, with what its page needs of the folder and the account. */
async function liveShare(db: Db, shareId: string, now: number) {
  const share = await db
    .selectFrom('folderShares')
    .innerJoin('folders', 'folders.id', 'folderShares.folderId')
    .innerJoin('users', 'users.id', 'folderShares.userId')
    .select(['folderShares.userId', 'folderShares.folderId', 'folderShares.expiresAt', 'folderShares.subfolders', 'folders.name', 'users.urlId'])
    .where('folderShares.shareId', '=', shareId)
    .where(live(now))
    .executeTakeFirst();
  if (!share) return null;
  // The folders whose files are listed, as the tree is now: one moved out of the shared folder
  // leaves the page with its files, one moved in joins it.
  const listed = share.subfolders === 1 ? await folderSubtree(db, share.userId, share.folderId) : new Map([[share.folderId, [] as string[]]]);
  // What anyone may see already: public, without a password, not expired (also when its expiry job has not run yet).
  const shown = () =>
    forAccount(db, share.userId)
      .selectFrom('files')
      .where('folderId', 'in', [...listed.keys()])
      .where('visibility', '=', 'PUBLIC')
      .where('passwordHash', 'is', null)
      .where((eb) => eb.or([eb('expiresAt', 'is', null), eb('expiresAt', '>', now)]));
  /** A file's folder path from the shared folder: empty for the folder's own. */
  const pathOf = (folderId: string | null) => (folderId === null ? [] : (listed.get(folderId) ?? []));
  return { ...share, shown, pathOf };
}

/**
 * One page of a shared folder's public files, newest first; null when no folder is shared at that
 * address, or its share has expired. A page past the last is the last.
 */
export async function sharedFolderPage(db: Db, shareId: string, askedPage: number, now = Date.now()): Promise<SharedFolderPage | null> {
  const share = await liveShare(db, shareId, now);
  if (!share) return null;
  // The count and the bytes in one pass: the bytes are the size of the ZIP the page offers.
  const counted = await share.shown().select([sql<number>`count(*)`.as('count'), sql<number>`coalesce(sum(size), 0)`.as('bytes')]).executeTakeFirstOrThrow();
  const total = Number(counted.count);
  const pageCount = Math.max(1, Math.ceil(total / FOLDER_PAGE_FILES));
  const page = Math.min(Math.max(1, askedPage), pageCount);
  const rows = await share
    .shown()
    .select(['id', 'name', 'mimeType', 'size', 'createdAt', 'thumbnailStatus', 'thumbnailKey', 'folderId'])
    .orderBy('createdAt', 'desc')
    .orderBy('id', 'desc')
    .limit(FOLDER_PAGE_FILES)
    .offset((page - 1) * FOLDER_PAGE_FILES)
    .execute();
  // A file of a subfolder says which, by its path from the shared folder: the page shows them all in one list.
  const files = rows.map(({ folderId, ...file }) => {
    const path = share.pathOf(folderId);
    return { ...file, subfolder: path.length === 0 ? null : path.join(' / ') };
  });
  const totalBytes = total > 0 && total <= FOLDER_ZIP_FILES ? Number(counted.bytes) : null;
  return { folderName: share.name, urlId: share.urlId, expiresAt: share.expiresAt === null ? null : Number(share.expiresAt), files, total, totalBytes, page, pageCount };
}

/**
 * Every file a shared folder's page lists, oldest first, with its folder path from the shared
 * folder, for the ZIP of them all; null when no folder is shared at that address (or its share
 * has ended), 'too many' past FOLDER_ZIP_FILES.
 */
export async function sharedFolderFiles(db: Db, shareId: string, now = Date.now()): Promise<{ folderName: string; files: Array<{ file: Selectable<FilesTable>; path: string[] }> } | 'too many' | null> {
  const share = await liveShare(db, shareId, now);
  if (!share) return null;
  // One more than the ZIP holds tells that there are too many, without counting them all.
  const rows = await share.shown().selectAll().orderBy('createdAt').orderBy('id').limit(FOLDER_ZIP_FILES + 1).execute();
  if (rows.length > FOLDER_ZIP_FILES) return 'too many';
  return { folderName: share.name, files: rows.map((file) => ({ file, path: share.pathOf(file.folderId) })) };
}
