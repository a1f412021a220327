import type { FastifyRequest } from 'fastify';

/**
 * Conditional requests (RFC 9110 §13) for answers named by a strong ETag and, for a file's bytes,
 * their upload time (docs/decisions.md, "Conditional requests").
 */

/**
 * Why the request's If-Match or If-Unmodified-Since does not hold, or null when they hold or are
 * absent. If-Match compares strongly (RFC 9110 §13.1.1) and decides alone when sent (§13.1.4); a
 * date that cannot be read is ignored.
 */
export function failedPrecondition(request: FastifyRequest, etag: string, lastModified: string): string | null {
  const ifMatch = request.headers['if-match'];
  if (ifMatch !== undefined) {
    return ifMatch.split(',').some((tag) => tag.trim() === '*' || tag.trim() === etag) ? null : "`If-Match` does not name the file's ETag";
  }
  const since = httpDate(request.headers['if-unmodified-since']);
  return since !== null && Date.parse(lastModified) > since ? '`If-Unmodified-Since` is before the file was uploaded' : null;
}

/**
 * Whether the client's copy is current: `If-None-Match` names `etag` (or any version), or, only
 * when that header is absent (RFC 9110 §13.1.3), `If-Modified-Since` is not before `lastModified`. The
 * tag comparison is weak (§13.1.2), so a cache that marked the tag weak still revalidates.
 */
export function notModified(request: FastifyRequest, etag: string, lastModified?: string): boolean {
  const inm = request.headers['if-none-match'];
  if (inm !== undefined) {
    return inm.split(',').some((tag) => {
      const named = tag.trim();
      return named === '*' || (named.startsWith('W/') ? named.slice(2) : named) === etag;
    });
  }
  const since = httpDate(request.headers['if-modified-since']);
  return lastModified !== undefined && since !== null && Date.parse(lastModified) <= since;
}

/** An HTTP date header as milliseconds, or null when absent or unreadable (then ignored, RFC 9110 §13.1.3). */
function httpDate(value: string | undefined): number | null {
  if (!value) return null;
  const time = Date.parse(value);
  return Number.isNaN(time) ? null : time;
}

/**
 * Whether a Range may be answered: without `If-Range`, or with one that matches `etag` strongly
 * (RFC 9110 §13.1.5). A weak tag or a date never matches (a date names a second, not the bytes: an
 * address may name other bytes uploaded in the same second), so a client resuming a download of
 * other bytes gets the whole file instead of a piece to splice onto its copy.
 */
export function rangeStillValid(request: FastifyRequest, etag: string): boolean {
  const ifRange = request.headers['if-range'];
  return ifRange === undefined || (typeof ifRange === 'string' && ifRange.trim() === etag);
}
