import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { invalid, type AppError } from '../errors.ts';

/**
 * An upload refused part-way (size, quota, a bad field) leaves the request paused mid-body: its
 * connection would then never notice the client hanging up and would stay open for ever, holding
 * shutdown too. The rest is read and thrown away instead, so the client gets the answer, the
 * connection closes when the client does, and a client that finishes sending can reuse it.
 */
export function discardRestOfBody(raw: IncomingMessage): void {
  if (raw.complete || raw.destroyed) return;
  raw.unpipe();
  raw.resume();
}

/** Whether a request's headers announce a body: a transfer coding, or a length other than 0. */
export function hasBody(headers: IncomingHttpHeaders): boolean {
  return headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0');
}

/** RFC 2046: a multipart boundary is 1 to 70 characters. */
const MAX_BOUNDARY_LENGTH = 70;

/**
 * What is wrong with a multipart Content-Type's boundary, if anything; checked before the body is
 * read, as the parser would otherwise fail on it with an error of its own.
 */
export function multipartBoundaryProblem(contentType: string | undefined): string | null {
  const match = /;\s*boundary=(?:"([^"]*)"|([^;\s]*))/i.exec(contentType ?? '');
  const boundary = match ? (match[1] ?? match[2] ?? '') : null;
  if (boundary === null) return 'The multipart/form-data Content-Type has no boundary parameter (multipart/form-data; boundary=…)';
  if (boundary.length === 0 || boundary.length > MAX_BOUNDARY_LENGTH) return `The multipart boundary must be 1 to ${MAX_BOUNDARY_LENGTH} characters long`;
  return null;
}

/**
 * A multipart body the parser (busboy, through @fastify/multipart) cannot take, as the client's
 * mistake; null for any other error. Busboy's own errors are plain Errors, told apart only by their
 * messages; the form limits set in routes/file-upload.ts come as coded errors.
 */
export function multipartMistake(error: unknown): AppError | null {
  if (!(error instanceof Error)) return null;
  const code = (error as { code?: string }).code;
  if (code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT' || code === 'FST_FILES_LIMIT') {
    return invalid('The form has too many parts: send one file part named "file" and only the option fields');
  }
  if (
    error.message === 'Unexpected end of multipart data' ||
    error.message.endsWith('terminated early due to unexpected end of multipart data') ||
    error.message === 'Multipart: Boundary not found'
  ) {
    return invalid('The multipart body ended before it was complete: it is cut short, lacks its closing delimiter, or does not use the boundary its Content-Type names');
  }
  return null;
}
