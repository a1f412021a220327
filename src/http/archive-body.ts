import { Transform, type Readable, type TransformCallback } from 'node:stream';
import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { tooLarge } from '../errors.ts';
import { hasBody } from './request-body.ts';
import { BODYLESS_METHODS, bodyWithDeadline } from './body-deadline.ts';

/**
 * The body rules of every archive route (contract §9; spec, Limits, "Archive body"): a request body
 * is read with a 16 KiB limit (413 beyond it) and a deadline of 5 seconds from the start of the
 * request (408 when it is not complete by then, and the connection is closed). They are applied in
 * app.ts to every route whose policy row says `archive`, when the route is registered, so no archive
 * route can forget them. The body is read before the handler runs, and a handler takes its archive
 * capacity only after that (http/archive-slot.ts), so a 413 or 408 never holds a slot.
 */

export const ARCHIVE_BODY_LIMIT = 16 * 1024;
export const ARCHIVE_BODY_DEADLINE_MS = 5000;

export function archiveBodyTooLarge(): Error {
  return tooLarge(`The request body is too large: archive routes take at most ${ARCHIVE_BODY_LIMIT / 1024} KiB`);
}

export function archiveBodyLate(): Error {
  // A status of its own: no domain error kind is a deadline; handleError answers any 4xx it carries.
  return Object.assign(new Error(`The request body was not complete within ${ARCHIVE_BODY_DEADLINE_MS / 1000} seconds of the request; archive routes wait no longer`), {
    statusCode: 408,
  });
}

/** Passes the body on, failing once more than the limit has arrived (a chunked body has no Content-Length to check first). */
class BoundedBody extends Transform {
  received = 0;
  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.received += chunk.length;
    if (this.received > ARCHIVE_BODY_LIMIT) return callback(archiveBodyTooLarge());
    callback(null, chunk);
  }
}

/**
 * The preParsing hook: refuses a declared length over the limit before reading a byte, and hands
 * the parser a stream that enforces the limit and the deadline as the bytes come.
 */
function boundArchiveBody(request: FastifyRequest, reply: FastifyReply, payload: Readable, done: (error: Error | null, payload?: Readable) => void): void {
  if (BODYLESS_METHODS.has(request.method) || !hasBody(request.headers)) return done(null, payload);
  if (Number(request.headers['content-length']) > ARCHIVE_BODY_LIMIT) {
    // The body is never read: the connection cannot carry another request after it.
    reply.header('Connection', 'close');
    return done(archiveBodyTooLarge());
  }
  done(null, bodyWithDeadline(reply, payload, ARCHIVE_BODY_DEADLINE_MS, archiveBodyLate, new BoundedBody()));
}

/** Gives a route the archive body rules; called from app.ts's onRoute for rows marked `archive`. */
export function applyArchiveBodyRules(route: RouteOptions): void {
  route.bodyLimit = ARCHIVE_BODY_LIMIT;
  const own = route.preParsing === undefined ? [] : Array.isArray(route.preParsing) ? route.preParsing : [route.preParsing];
  route.preParsing = [boundArchiveBody as (typeof own)[number], ...own];
}
