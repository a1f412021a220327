import type { Db } from '../db/database.ts';
import { forAccount } from '../db/account-scope.ts';
import { newId } from '../db/ids.ts';
import { isUniqueViolation } from '../db/unique-violation.ts';
import { forbidden, invalid, notFound } from '../errors.ts';
import { generateShortCode, isShortCode } from './short-code.ts';
import { takeAttempt } from '../auth/throttle.ts';
import type { ShortLink } from '../api/links.ts';
import { keptUrl } from '../shared/http-url.ts';

export const shortLinkLimits = {
  /** Longest accepted target URL, in characters. */
  targetUrlLength: 2048,
  /** Inserts tried before giving up on finding a free short code. */
  codeAttempts: 5,
  /** Links an account may create per minute: generous for people and scripts, not for floods. */
  perMinute: 120,
} as const;

interface ShortLinkRow {
  id: string;
  userId: string;
  shortCode: string;
  targetUrl: string;
  clicks: number;
  createdAt: number;
}

const linkColumns = ['id', 'userId', 'shortCode', 'targetUrl', 'clicks', 'createdAt'] as const;

function toView(row: ShortLinkRow): ShortLink {
  return {
    id: row.id,
    shortCode: row.shortCode,
    targetUrl: row.targetUrl,
    clicks: Number(row.clicks),
    createdAt: new Date(Number(row.createdAt)).toISOString(),
    userId: row.userId,
  };
}

/**
 * Checks a target URL and returns the form to store. Only absolute http: and https: URLs of at most
 * 2,048 characters are accepted. A URL of plain printable ASCII written `http(s)://…` is kept
 * exactly as given; any other (spaces, non-ASCII characters, a scheme without its `//`, backslashes
 * for slashes) is stored in its normalised WHATWG form (percent-encoded path, punycode host, `//`),
 * so that it can always be sent in a `Location` header and leads where it was read to lead.
 */
export function normalizeTargetUrl(input: string): string {
  const value = input.trim();
  const max = shortLinkLimits.targetUrlLength;
  if (value === '') throw invalid('url: must not be empty; give an http:// or https:// URL');
  if (value.length > max) throw invalid(`url: must be at most ${max} characters (got ${value.length})`);
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw invalid('url: must be an absolute http:// or https:// URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw invalid(`url: only http:// and https:// URLs can be shortened (got ${parsed.protocol})`);
  }
  const normalized = keptUrl(value, parsed);
  if (normalized.length > max) throw invalid(`url: must be at most ${max} characters once encoded (got ${normalized.length})`);
  return normalized;
}

/** The account's links, newest first (ties by ID); no pagination, as the specification describes. */
export async function listShortLinks(db: Db, userId: string): Promise<ShortLink[]> {
  const rows = await forAccount(db, userId).selectFrom('shortLinks').select(linkColumns).orderBy('createdAt', 'desc').orderBy('id', 'desc').execute();
  return rows.map(toView);
}

/**
 * Creates a link with a new random short code. Uniqueness is the database's unique constraint: on a
 * collision the insert fails without effect and is retried with a fresh code. `generateCode` exists
 * so the retry can be exercised; callers use the default.
 */
export async function createShortLink(db: Db, userId: string, url: string, generateCode: () => string = generateShortCode): Promise<ShortLink> {
  const targetUrl = normalizeTargetUrl(url);
  await takeAttempt(db, `short-links:${userId}`, shortLinkLimits.perMinute, 60_000, 'Too many short links created; try again later');
  const account = forAccount(db, userId);
  for (let attempt = 1; ; attempt += 1) {
    const row: ShortLinkRow = { id: newId(), userId, shortCode: generateCode(), targetUrl, clicks: 0, createdAt: Date.now() };
    const { userId: _owner, ...values } = row;
    try {
      await account.insertInto('shortLinks', values).execute();
      return toView(row);
    } catch (error) {
      if (!isUniqueViolation(error) || attempt >= shortLinkLimits.codeAttempts) throw error;
    }
  }
}

/**
 * Deletes one of the account's links. A link of another account is refused (403) rather than
 * reported missing, as the specification requires; only a link that does not exist at all is 404.
 */
export async function deleteShortLink(db: Db, userId: string, id: string): Promise<void> {
  const { numDeletedRows } = await forAccount(db, userId).deleteFrom('shortLinks').where('id', '=', id).executeTakeFirst();
  if (numDeletedRows > 0n) return;
  // Not ours: the only thing read across accounts is whether the ID exists.
  const exists = await db.selectFrom('shortLinks').select('id').where('id', '=', id).executeTakeFirst();
  if (exists) throw forbidden('You do not have permission to delete this URL: it belongs to another account.');
  throw notFound('URL not found');
}

/**
 * Resolves a short code for the public redirect. With `count`, the click is added in the same
 * statement that reads the target (`clicks = clicks + 1 … returning`), so concurrent visits are
 * never lost. Returns undefined for an unknown or malformed code.
 */
export async function resolveShortCode(db: Db, code: string, options: { count: boolean }): Promise<string | undefined> {
  if (!isShortCode(code)) return undefined;
  if (!options.count) {
    return (await db.selectFrom('shortLinks').select('targetUrl').where('shortCode', '=', code).executeTakeFirst())?.targetUrl;
  }
  const row = await db
    .updateTable('shortLinks')
    .set((eb) => ({ clicks: eb('clicks', '+', 1) }))
    .where('shortCode', '=', code)
    .returning('targetUrl')
    .executeTakeFirst();
  return row?.targetUrl;
}
