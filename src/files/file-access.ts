import { createHmac } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { Db, Dialect } from '../db/database.ts';
import { forAccount, type Executor } from '../db/account-scope.ts';
import { ownerLockedFirst } from '../db/locks.ts';
import type { FilesTable } from '../db/schema.ts';
import { constantTimeEqual } from '../auth/secrets.ts';

export type FileRow = Selectable<FilesTable>;

export interface Viewer {
  /** The signed-in browser session's account, if any. Tokens never open files. */
  userId: string | null;
  /** Unlock cookies the browser sent, by cookie name. */
  cookies: Record<string, string | undefined>;
}

/**
 * - `open`: the bytes may be served;
 * - `locked`: a password-protected public file, not unlocked by this browser;
 * - `hidden`: private, expired or someone else's — answered exactly like a missing file.
 */
export type Access = 'open' | 'locked' | 'hidden';

export function accessTo(file: FileRow, viewer: Viewer, now = Date.now()): Access {
  if (viewer.userId === file.userId) return 'open';
  if (file.visibility !== 'PUBLIC') return 'hidden';
  if (file.expiresAt !== null && file.expiresAt <= now) return 'hidden';
  if (file.passwordHash !== null) {
    const cookie = viewer.cookies[unlockCookieName(file.id)];
    return cookie && constantTimeEqual(cookie, unlockToken(file)) ? 'open' : 'locked';
  }
  return 'open';
}

export function unlockCookieName(fileId: string): string {
  return `hoard_unlock_${fileId}`;
}

/**
 * The unlock cookie's value, keyed by the file's salted password hash: it opens only that file,
 * only until its password changes, and cannot be made without the hash, which never leaves the server.
 */
export function unlockToken(file: Pick<FileRow, 'id' | 'passwordHash'>): string {
  return createHmac('sha256', file.passwordHash ?? '').update(`unlock:${file.id}`).digest('base64url');
}

export async function findByUrlPath(db: Db, urlId: string, name: string): Promise<{ file: FileRow; urlId: string } | null> {
  const row = await db
    .selectFrom('files')
    .innerJoin('users', 'users.id', 'files.userId')
    .selectAll('files')
    .where('users.urlId', '=', urlId)
    // Names are stored composed (sanitizeFileName): a link typed decomposed (é as e and an accent,
    // as macOS writes it) names the same file.
    .where('files.name', '=', name.normalize('NFC'))
    .executeTakeFirst();
  return row ? { file: row, urlId } : null;
}

export async function findById(db: Db, id: string): Promise<{ file: FileRow; urlId: string } | null> {
  const row = await db.selectFrom('files').innerJoin('users', 'users.id', 'files.userId').selectAll('files').select('users.urlId').where('files.id', '=', id).executeTakeFirst();
  if (!row) return null;
  const { urlId, ...file } = row;
  return { file, urlId };
}

/** One of the account's own files, or null (another account's file too: it is not there for this one). */
export async function findOwnedFile(db: Executor, userId: string, id: string): Promise<FileRow | null> {
  return (await forAccount(db, userId).selectFrom('files').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
}

/** Adds one to a file's view or download count, the owner's lock first (see ownerLockedFirst). */
async function countOne(db: Db, dialect: Dialect, fileId: string, column: 'views' | 'downloads'): Promise<void> {
  await db
    .updateTable('files')
    .set((eb) => ({ [column]: eb(column, '+', 1) }))
    .where('id', '=', fileId)
    .$call(ownerLockedFirst(dialect, fileId))
    .execute();
}

export const countView = (db: Db, dialect: Dialect, fileId: string) => countOne(db, dialect, fileId, 'views');
export const countDownload = (db: Db, dialect: Dialect, fileId: string) => countOne(db, dialect, fileId, 'downloads');

/**
 * Types a browser would run or render as a document in our origin: every JavaScript MIME type of the
 * WHATWG MIME Sniffing standard, HTML, XHTML, SVG and other XML (any `+xml` type, XSL), and
 * multipart/x-mixed-replace, whose parts a browser renders. The one list; such files are only ever
 * served as downloads. JSON is not on it: a browser never runs it.
 */
const activeTypes = new Set([
  'application/ecmascript',
  'application/javascript',
  'application/x-ecmascript',
  'application/x-javascript',
  'text/ecmascript',
  'text/javascript',
  'text/javascript1.0',
  'text/javascript1.1',
  'text/javascript1.2',
  'text/javascript1.3',
  'text/javascript1.4',
  'text/javascript1.5',
  'text/jscript',
  'text/livescript',
  'text/x-ecmascript',
  'text/x-javascript',
  'text/html',
  'application/xhtml+xml',
  'image/svg+xml',
  'text/xml',
  'application/xml',
  'text/xsl',
  'application/xml-dtd',
  'text/xml-external-parsed-entity',
  'application/xml-external-parsed-entity',
  'multipart/x-mixed-replace',
]);

export function isActiveContent(mimeType: string): boolean {
  // Parameters and case do not change what a browser does with the type.
  const type = mimeType.split(';')[0]!.trim().toLowerCase();
  return activeTypes.has(type) || type.endsWith('+xml');
}

/**
 * The Content-Type a file's bytes are sent with: its stored type, and for text `charset=utf-8`.
 * The stored type is the bare MIME type (a declared charset is not kept), and a browser reads text
 * without a charset as windows-1252, garbling every UTF-8 file that is not plain ASCII; UTF-8 is
 * what text files are written in today (docs/decisions.md, "Declared and detected types").
 */
export function servedContentType(mimeType: string): string {
  return /^text\/[^;]+$/i.test(mimeType) ? `${mimeType}; charset=utf-8` : mimeType;
}

/**
 * The one range of a `bytes=` Range header this server answers with 206, 'unsatisfiable' for a 416,
 * or null to send the whole file. The header is a list (RFC 9110 §14.1.1): empty items are skipped
 * (§5.6.1.2), ranges outside the file are passed over while another is satisfiable, and ranges that
 * overlap or touch are joined (§14.2). Ranges left apart would need a multipart answer, which this
 * server does not send: the whole file then, as for a header it cannot read.
 */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | null {
  if (!header) return null;
  // The unit is case-insensitive (RFC 9110 §14.1).
  const unit = /^bytes\s*=/i.exec(header.trim());
  if (!unit) return null;
  const items = header.trim().slice(unit[0].length).split(',').map((item) => item.trim()).filter((item) => item !== '');
  if (items.length === 0) return null;
  const satisfiable: { start: number; end: number }[] = [];
  for (const item of items) {
    const range = rangeOf(item, size);
    if (range === null) return null;
    if (range !== 'unsatisfiable') satisfiable.push(range);
  }
  if (satisfiable.length === 0) return 'unsatisfiable';
  satisfiable.sort((a, b) => a.start - b.start);
  const joined = { ...satisfiable[0]! };
  for (const next of satisfiable.slice(1)) {
    if (next.start > joined.end + 1) return null;
    joined.end = Math.max(joined.end, next.end);
  }
  return joined;
}

/** One item of a Range list: a range of the file, 'unsatisfiable', or null when it is no range. */
function rangeOf(item: string, size: number): { start: number; end: number } | 'unsatisfiable' | null {
  // A range whose last byte comes before its first is no range (§14.1.1), as is anything but digits and a dash.
  const match = /^(\d*)-(\d*)$/.exec(item);
  if (!match) return null;
  const [, from, to] = match;
  if (from === '' && to === '') return null;
  if (from !== '' && to !== '' && Number(to) < Number(from)) return null;
  if (from === '') {
    const suffix = Number(to);
    // A suffix of nothing, or of an empty file, has no bytes to send (RFC 9110 §14.1.3).
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(from);
  const end = to === '' ? size - 1 : Math.min(Number(to), size - 1);
  if (start >= size || start > end) return 'unsatisfiable';
  return { start, end };
}
