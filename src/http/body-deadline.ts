import { PassThrough, type Readable, type Transform } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { hasBody } from './request-body.ts';
import { seconds } from './client-bounds.ts';

/**
 * Hands the parser `into` (a PassThrough unless given) fed from `payload`, failing it with `late()`
 * once `deadlineMs` from the start of the request have passed before the body is complete; the
 * connection is then closed after the answer, as the rest of the body is not read. Bodies read
 * whole into memory have such a deadline (docs/decisions.md, "Client bounds"), since the idle
 * deadline alone let a client keep a connection for ever by sending one byte every 29 seconds.
 */
export function bodyWithDeadline(reply: FastifyReply, payload: Readable, deadlineMs: number, late: () => Error, into: Transform = new PassThrough()): Readable {
  // Not pipeline(): it would destroy the request, and with it the connection, before the answer is written.
  payload.on('error', (error) => into.destroy(error));
  payload.pipe(into);
  // Counted from the start of the request (reply.elapsedTime starts when it is routed), so slow
  // headers and a slow body together get the deadline.
  const timer = setTimeout(
    () => {
      if (reply.sent || into.writableFinished) return;
      reply.header('Connection', 'close');
      payload.unpipe(into);
      into.destroy(late());
    },
    Math.max(0, deadlineMs - reply.elapsedTime),
  );
  const stop = () => clearTimeout(timer);
  into.once('end', stop).once('close', stop);
  reply.raw.once('close', stop);
  into.once('error', () => {
    // Whatever is left of the body is not read: close the connection after the answer.
    if (!reply.sent) reply.header('Connection', 'close');
  });
  return into;
}

/** Methods whose body Fastify never reads; a body sent with them is left alone. */
export const BODYLESS_METHODS = new Set(['GET', 'HEAD']);

/**
 * Whether a request's body is read whole into memory (JSON, a form, text), rather than streamed
 * to storage: a file upload (multipart) or a chunked upload's part (octet-stream), whose bytes may
 * take as long as they keep coming (contract §7).
 */
export function bodyReadWhole(request: FastifyRequest): boolean {
  if (BODYLESS_METHODS.has(request.method) || !hasBody(request.headers)) return false;
  const type = (request.headers['content-type'] ?? '').trim().toLowerCase();
  return !type.startsWith('multipart/') && !type.startsWith('application/octet-stream');
}

/** The whole-body deadline of bodies read into memory: twice the idle time. */
export const wholeBodyDeadlineMs = (idleMs: number) => 2 * idleMs;

export function wholeBodyLate(deadlineMs: number): Error {
  return Object.assign(new Error(`The request body was not complete within ${seconds(deadlineMs)} of the request`), { statusCode: 408 });
}
