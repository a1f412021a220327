import type { AppContext } from '../context.ts';
import type { Db } from '../db/database.ts';
import type { AlsoInTransaction } from '../db/also.ts';
import { forAccount } from '../db/account-scope.ts';
import { invalid, notFound } from '../errors.ts';
import { deleteFileRecord } from '../files/delete-file.ts';
import { findById, findByUrlPath } from '../files/file-access.ts';
import { isShortCode } from '../links/short-code.ts';
import { assertCanManage } from '../accounts/users.ts';
import { addNotice } from '../accounts/notices.ts';
import type { PermissionSet } from '../auth/permissions.ts';
import type { ReportedContent } from '../api/admin.ts';

/**
 * Taking down one file or short link of any account (docs/decisions.md, "Taking down content"): an
 * administrator handed an address in an abuse report finds what it leads to, and whose it is, and
 * removes that alone, where suspending the account leaves its shares up and deleting it takes every
 * file. The address is read as the product writes its addresses; the host is not compared, so an
 * address seen behind another proxy name is found too.
 */

/** The longest reason an administrator may give for a take-down (shown to the owner). */
export const TAKE_DOWN_REASON_LENGTH = 500;

/** What an address this instance hands out may name (see parseAddress). */
type Address = { kind: 'share'; urlId: string; name: string } | { kind: 'file'; id: string } | { kind: 'link'; code: string };

/** The routes whose second segment is a file ID (contract §3: download, preview, thumbnail, text). */
const byIdRoutes = new Set(['download', 'preview', 'thumbnail', 'ocr']);

const addressForms = '`BASE_URL/<urlId>/<name>` (a share page), `BASE_URL/api/files/<urlId>/<name>`, `BASE_URL/api/files/<id>/download` or `BASE_URL/u/<code>` (a short link)';

/** The readings of an address, to be tried in turn; none when it is no address of a file or link. */
function parseAddress(input: string): Address[] {
  const value = input.trim();
  if (value === '') throw invalid(`address: give the address of a file or short link: ${addressForms}`);
  let url: URL;
  try {
    // A path alone ("/u/Ab3_xY") is read against a placeholder host: only the path counts.
    url = new URL(value, 'http://hoard.invalid');
  } catch {
    throw invalid(`address: not an address; give one of ${addressForms}`);
  }
  let segments: string[];
  try {
    segments = url.pathname.split('/').filter((segment) => segment !== '').map((segment) => decodeURIComponent(segment));
  } catch {
    throw invalid('address: its path has a broken %-escape');
  }
  const [first, second, third] = segments;
  if (segments.length === 2 && first === 'u' && isShortCode(second!)) return [{ kind: 'link', code: second! }];
  if (segments.length === 2) return [{ kind: 'share', urlId: first!, name: second! }];
  if (segments.length === 4 && first === 'api' && second === 'files') {
    const fourth = segments[3]!;
    // A file may be named "download": both readings are tried, the file-ID route's first.
    return byIdRoutes.has(fourth) ? [{ kind: 'file', id: third! }, { kind: 'share', urlId: third!, name: fourth }] : [{ kind: 'share', urlId: third!, name: fourth }];
  }
  return [];
}

async function ownerOf(db: Db, userId: string): Promise<ReportedContent['owner']> {
  const user = await db.selectFrom('users').select(['id', 'email']).where('id', '=', userId).executeTakeFirstOrThrow();
  return { id: user.id, email: user.email };
}

/** What an address of this instance leads to, with its owner; a 404 when it leads nowhere. */
export async function findReported(db: Db, address: string): Promise<ReportedContent> {
  const readings = parseAddress(address);
  if (readings.length === 0) throw invalid(`address: not an address of a file or short link; give one of ${addressForms}`);
  for (const reading of readings) {
    if (reading.kind === 'link') {
      const link = await db.selectFrom('shortLinks').select(['id', 'userId', 'shortCode', 'targetUrl', 'clicks', 'createdAt']).where('shortCode', '=', reading.code).executeTakeFirst();
      if (!link) continue;
      return {
        kind: 'link',
        id: link.id,
        label: link.targetUrl,
        shortCode: link.shortCode,
        clicks: Number(link.clicks),
        createdAt: new Date(Number(link.createdAt)).toISOString(),
        owner: await ownerOf(db, link.userId),
      };
    }
    const found = reading.kind === 'file' ? await findById(db, reading.id) : await findByUrlPath(db, reading.urlId, reading.name);
    if (!found) continue;
    const { file } = found;
    return {
      kind: 'file',
      id: file.id,
      label: file.name,
      mimeType: file.mimeType,
      sizeBytes: Number(file.size),
      visibility: file.visibility,
      hasPassword: file.passwordHash !== null,
      views: Number(file.views),
      createdAt: new Date(Number(file.createdAt)).toISOString(),
      owner: await ownerOf(db, file.userId),
    };
  }
  throw notFound('Nothing at this address: no file or short link of this instance has it (it may have been deleted already)');
}

/**
 * Removes a file of any account as its owner's deletion does: record, quota charge, thumbnail and
 * bytes (src/files/delete-file.ts). Not of an account holding a permission the actor lacks, which
 * the actor may not change either (docs/decisions.md, Administration). Returns what it was, for the logs.
 */
export async function takeDownFile(
  ctx: AppContext,
  actor: PermissionSet,
  fileId: string,
  reason: string | null,
  also?: AlsoInTransaction<{ owner: ReportedContent['owner']; name: string; size: number }>,
): Promise<{ owner: ReportedContent['owner']; name: string; size: number }> {
  const found = await findById(ctx.db, fileId);
  if (!found) throw notFound('File not found');
  await assertCanManage(ctx.db, actor, found.file.userId);
  const owner = await ownerOf(ctx.db, found.file.userId);
  const taken = { owner, name: found.file.name, size: found.file.size };
  const removed = await deleteFileRecord(ctx, found.file.userId, fileId, async (trx) => {
    // The owner is told, not left to find the file gone: in the same transaction as the removal.
    await addNotice(trx, owner.id, { kind: 'file.take-down', subject: found.file.name, reason });
    if (also) await also(trx, taken);
  });
  if (!removed) throw notFound('File not found');
  return taken;
}

/** Removes a short link of any account, under the same rule. Returns what it was, for the logs. */
export async function takeDownLink(
  db: Db,
  baseUrl: string,
  actor: PermissionSet,
  linkId: string,
  reason: string | null,
  also?: AlsoInTransaction<{ owner: ReportedContent['owner']; address: string; targetUrl: string }>,
): Promise<{ owner: ReportedContent['owner']; address: string; targetUrl: string }> {
  const link = await db.selectFrom('shortLinks').select(['userId', 'shortCode', 'targetUrl']).where('id', '=', linkId).executeTakeFirst();
  if (!link) throw notFound('URL not found');
  await assertCanManage(db, actor, link.userId);
  const owner = await ownerOf(db, link.userId);
  const address = `${baseUrl}/u/${link.shortCode}`;
  await db.transaction().execute(async (trx) => {
    const { numDeletedRows } = await forAccount(trx, link.userId).deleteFrom('shortLinks').where('id', '=', linkId).executeTakeFirst();
    if (numDeletedRows === 0n) throw notFound('URL not found');
    await addNotice(trx, owner.id, { kind: 'link.take-down', subject: address, reason });
    if (also) await also(trx, { owner, address, targetUrl: link.targetUrl });
  });
  return { owner, address, targetUrl: link.targetUrl };
}
