import type { IncomingHttpHeaders } from 'node:http';
import { hasBody } from './request-body.ts';

/** How much of a refused Content-Encoding the answer repeats. */
const MAX_QUOTED = 64;

/**
 * What is wrong with a request body's content coding, if anything. Hoard reads bodies as they are
 * sent and decodes none: a compressed chunk would otherwise be stored compressed, as the file's
 * bytes, and compressed JSON would fail as JSON. A body with any coding but `identity` is refused
 * (a 400 naming the coding, with `Accept-Encoding: identity`) before a byte of it is read. A request without a body may carry the
 * header; it says nothing then.
 */
export function contentCodingProblem(headers: IncomingHttpHeaders): string | null {
  const coding = headers['content-encoding']?.trim();
  if (!coding) return null;
  if (!hasBody(headers)) return null;
  const codings = coding.split(',').map((token) => token.trim().toLowerCase());
  if (codings.every((token) => token === 'identity' || token === '')) return null;
  const quoted = coding.length > MAX_QUOTED ? `${coding.slice(0, MAX_QUOTED)}…` : coding;
  return `Content-Encoding "${quoted}" is not supported: send the body as it is, without a content coding`;
}
