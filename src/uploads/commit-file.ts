import { sql, type Transaction } from 'kysely';
import type { AppContext } from '../context.ts';
import type { Database } from '../db/schema.ts';
import { forAccount } from '../db/account-scope.ts';
import type { Principal } from '../auth/principal.ts';
import { hasPermission } from '../auth/permissions.ts';
import { hashPassword } from '../auth/passwords.ts';
import { readSettings, type InstanceSettings } from '../settings/instance-settings.ts';
import { accountGone, forbidden, unavailable } from '../errors.ts';
import { isTokenActive } from '../tokens/named-tokens.ts';
import { quotaExceeded, quotaFor } from './allowance.ts';
import { reservedBytes } from './reservations.ts';
import { extensionOf, nameCandidates, randomFileName, sanitizeFileName } from '../shared/naming.ts';
import { extensionFor } from './content-type.ts';
import type { ResolvedOptions } from '../shared/upload-options.ts';
import { scheduleExpiry } from '../files/expiry.ts';
import { takeBackStorageDeletes } from '../jobs/storage-cleanup.ts';
import { emitFileReady, enabledWebhookIds } from '../webhooks/outbox.ts';
import { uploadLinks } from '../files/file-views.ts';
import type { FileRow } from '../files/file-access.ts';
import { foldForSearch } from '../shared/search-text.ts';
import { initialMediaStatus } from '../media/media-kinds.ts';
import { enqueueMediaWork } from '../media/media-jobs.ts';

/** Bytes already in storage at `storageKey`, waiting for their record. */
export interface StoredUpload {
  id: string;
  storageKey: string;
  originalName: string;
  mimeType: string;
  size: number;
  sha256: string | null;
  folderId: string | null;
  options: ResolvedOptions;
}


/**
 * Makes stored bytes a file, atomically: the record, its tags, the quota charge, the expiry job and
 * the file.ready event commit together or not at all. The caller deletes the bytes if this throws.
 */
export async function commitFile(
  ctx: AppContext,
  principal: Principal,
  upload: StoredUpload,
  trxHook?: (trx: Transaction<Database>, file: FileRow) => Promise<void>,
  /** The chunked-upload session this commit completes: its reservation is replaced by the charge. */
  completesSession?: string,
): Promise<FileRow> {
  const [committed] = await commitFiles(ctx, principal, [{ upload, ...(trxHook ? { trxHook } : {}) }], completesSession);
  return committed!;
}

/**
 * commitFile for several uploads of one account, in one transaction, in their order: all become
 * files or none does (the first refusal is thrown). They are charged to the quota together; each
 * is named and numbered in turn, as if committed alone.
 */
export async function commitFiles(
  ctx: AppContext,
  principal: Principal,
  uploads: ReadonlyArray<{ upload: StoredUpload; trxHook?: (trx: Transaction<Database>, file: FileRow) => Promise<void> }>,
  completesSession?: string,
): Promise<FileRow[]> {
  const passwordHashes = await Promise.all(uploads.map(({ upload: { options } }) => (options.password ? hashPassword(options.password) : (options.passwordHash ?? null))));
  const settings = await readSettings(ctx.db);
  const userId = principal.user.id;
  const committed = await ctx.db.transaction().execute(async (trx) => {
    // Charging the quota first takes the account's row lock (serialising quota checks and name
    // allocation per account) and reads the account in the same statement: the lock is held for as
    // few round trips as possible. A refused upload rolls the charge back. Several uploads are
    // charged and numbered at once, and refused together.
    const total = uploads.reduce((sum, { upload }) => sum + upload.size, 0);
    const owner = await trx
      .updateTable('users')
      .set((eb) => ({ usedBytes: eb('usedBytes', '+', total), docSeq: eb('docSeq', '+', uploads.length) }))
      .where('id', '=', userId)
      .returning(['quotaBytes', 'usedBytes', 'urlId', 'lastUploadAt', 'suspendedAt', 'uploadTokenHash'])
      .executeTakeFirstOrThrow(accountGone);
    // The legacy credential regenerated while the bytes arrived: refused as a revoked token is. It
    // is the one the uploader configurations embed, the likeliest to leak.
    if (principal.legacyCredentialHash !== undefined && owner.uploadTokenHash !== principal.legacyCredentialHash) {
      throw forbidden('The upload credential was regenerated before the upload was finalized');
    }
    // Suspended while the bytes arrived: refused as a revoked token is (docs/decisions.md, "Suspending an account").
    if (owner.suspendedAt !== null) throw forbidden('The account was suspended before the upload was finalized');
    // A named token revoked or expired while the bytes arrived no longer commits them: 403 (spec,
    // Errors). Checked here, under the account's lock that a revocation takes too, so a revocation
    // is either seen or comes after the file exists; checked only when the request began, a leaked
    // token's multi-gigabyte upload went on to commit after its owner revoked it.
    if (principal.token && !(await isTokenActive(trx, principal.token.id))) throw forbidden('The token was revoked or expired before the upload was finalized');
    const usedBefore = owner.usedBytes - total;
    const quota = quotaFor(principal, owner.quotaBytes, settings.defaultQuotaBytes);
    if (quota !== null) {
      // Room the account's open chunked uploads reserved is not this upload's (src/uploads/reservations.ts).
      const reserved = await reservedBytes(trx, userId, Date.now(), completesSession);
      if (owner.usedBytes + reserved > quota) throw quotaExceeded(Math.max(0, quota - usedBefore - reserved), reserved);
    }
    // Never before the account's previous upload, even when the clock was set back: on SQLite the
    // search index counts an account's matches per calendar bucket by their document numbers, which
    // follow upload order (migration 0020-search-documents).
    const now = Math.max(Date.now(), owner.lastUploadAt ?? 0);
    // Webhooks act for their owner: an account that may no longer manage webhooks can neither see nor
    // stop its own, so they send nothing until it may again.
    const webhooks = hasPermission(principal.permissions, 'webhooks.manage') ? await enabledWebhookIds(trx, userId) : [];
    const files: FileRow[] = [];
    for (const [i, { upload, trxHook }] of uploads.entries()) {
      const numbering = { now, docSeqBack: uploads.length - 1 - i };
      files.push(await insertFile(ctx, trx, principal, settings, owner.urlId, numbering, upload, passwordHashes[i] ?? null, webhooks, trxHook));
    }
    // The bytes have their records: the crash safety nets scheduled before streaming are cancelled
    // with them, atomically. Cancelled after the commit, a net could be cancelled after an account's
    // deletion had removed the new records and scheduled their bytes' removal under the same job
    // key: the removal went with the net, and the bytes stayed for good. A net that is running or
    // has run may have removed the bytes: no record for them.
    if (!(await takeBackStorageDeletes(trx, files.map((file) => file.storageKey)))) {
      throw unavailable('This upload waited too long for its record (more than 5 minutes) and its bytes were taken for abandoned; upload it again', 5);
    }
    return files;
  });
  // The expiry jobs, webhook deliveries and media work committed with the files can start now.
  ctx.jobs.wake();
  return committed;
}

/** One upload's record and what goes with it, in the transaction that charged it (commitFiles). */
async function insertFile(
  ctx: AppContext,
  trx: Transaction<Database>,
  principal: Principal,
  settings: InstanceSettings,
  urlId: string,
  /** The commit's time, and how far this file's document number is below the account's last one. */
  numbering: { now: number; docSeqBack: number },
  upload: StoredUpload,
  passwordHash: string | null,
  webhooks: readonly string[],
  trxHook: ((trx: Transaction<Database>, file: FileRow) => Promise<void>) | undefined,
): Promise<FileRow> {
  const userId = principal.user.id;
  const account = forAccount(trx, userId);
  const { now } = numbering;

  const name = await allocateName(trx, userId, upload);
  // An expiration preset counts from now, the commit; an instant stays that instant.
  const expiresAt = upload.options.expiresAfter != null ? now + upload.options.expiresAfter : upload.options.expiresAt;
  // A folder deleted while the bytes arrived leaves the file unfiled, as its own files were left
  // (src/organisation/folders.ts). Read under the account's row lock, which the charge took and a
  // folder's deletion takes too, so it cannot go between this look and the insert.
  const folderId = upload.folderId === null ? null : ((await account.selectFrom('folders').select('id').where('id', '=', upload.folderId).executeTakeFirst())?.id ?? null);
  const file: FileRow = {
    id: upload.id,
    userId,
    name,
    // As the client or the archive named it, less any NUL character, which PostgreSQL cannot store
    // (a multipart file name or a ZIP entry name may hold one; docs/decisions.md, "Errors").
    originalName: upload.originalName.replaceAll('\u0000', '').slice(0, 1024),
    storageKey: upload.storageKey,
    mimeType: upload.mimeType,
    size: upload.size,
    sha256: upload.sha256,
    visibility: upload.options.visibility,
    passwordHash,
    expiresAt,
    expiryAction: expiresAt === null ? null : upload.options.expiryAction,
    folderId,
    shareStyle: upload.options.shareStyle,
    views: 0,
    downloads: 0,
    ocrText: null,
    searchName: foldForSearch(name),
    searchOcr: null,
    ...initialMediaStatus(upload.mimeType, settings),
    thumbnailKey: null,
    thumbnailWidth: null,
    thumbnailHeight: null,
    mediaWidth: null,
    mediaHeight: null,
    // Numbered as the row is inserted (below).
    docId: null,
    // Set by the database as tags are put on (migration 0031-tagged-files).
    tagged: 0,
    createdAt: now,
    updatedAt: now,
  };
  const { userId: _owner, ...values } = file;
  // The file's number in SQLite's search index: one of the account's next ones, counted by the
  // charge (migration 0020-search-documents), computed in SQL, whose integers have 64 bits.
  const docId = sql<number | null>`(select ${sql.ref('users.accountNo')} * 4294967296 + ${sql.ref('users.docSeq')} - ${numbering.docSeqBack} from ${sql.table('users')} where ${sql.ref('users.id')} = ${userId})`;
  await account.insertInto('files', { ...values, docId }).execute();

  // Tags a profile still names but that were deleted since are skipped, not an error.
  const tagIds = upload.options.tagIds.length
    ? (await account.selectFrom('tags').select('id').where('id', 'in', upload.options.tagIds).execute()).map((t) => t.id)
    : [];
  // Each tag row with its file's upload time and columns, as the database would fill them
  // (migrations 0030-tag-upload-times, 0052-tag-combinations); SQLite would write each row again.
  const beside = { createdAt: now, mimeType: file.mimeType, visibility: file.visibility, password: file.passwordHash === null ? 0 : 1, folderId: file.folderId ?? '' };
  if (tagIds.length) await trx.insertInto('fileTags').values(tagIds.map((tagId) => ({ fileId: file.id, tagId, ...beside }))).execute();

  if (file.expiresAt !== null) await scheduleExpiry(trx, file.id, file.expiresAt);
  // Thumbnail and text recognition (contract §10): committed with the file, done in the background.
  await enqueueMediaWork(trx, file);
  const links = uploadLinks(ctx.config.baseUrl, urlId, file);
  await emitFileReady(trx, userId, {
    id: file.id,
    name: file.name,
    mimeType: file.mimeType,
    size: file.size,
    visibility: file.visibility,
    hasPassword: passwordHash !== null,
    folderId: file.folderId,
    url: links.url,
    rawUrl: links.rawUrl,
  }, webhooks);
  if (trxHook) await trxHook(trx, file);
  return file;
}

async function allocateName(trx: Transaction<Database>, userId: string, upload: StoredUpload): Promise<string> {
  const account = forAccount(trx, userId);
  const taken = async (candidate: string) => Boolean(await account.selectFrom('files').select('id').where('name', '=', candidate).executeTakeFirst());
  if (upload.options.randomizeFileUrls) {
    const extension = extensionOf(upload.originalName) ?? extensionFor(upload.mimeType);
    for (;;) {
      const candidate = randomFileName(extension);
      if (!(await taken(candidate))) return candidate;
    }
  }
  for (const candidate of nameCandidates(sanitizeFileName(upload.originalName, extensionFor(upload.mimeType)))) {
    if (!(await taken(candidate))) return candidate;
  }
  throw new Error('unreachable');
}
