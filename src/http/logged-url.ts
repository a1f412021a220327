import type { FastifyRequest } from 'fastify';
import { SECRET_PREFIX } from '../auth/token-format.ts';

/** Query parameters whose value a log line never shows: by their name, a secret. */
const SECRET_NAMES = /pass|pwd|pin|otp|code|invite|token|secret|key|auth|sig|credential|session/i;
const NAMED_TOKEN = new RegExp(`${SECRET_PREFIX}[^/?&#]*`, 'g');

/**
 * A request's URL as its log lines show it. Secrets belong in headers and bodies (spec: never put a
 * token in a URL), but scripts do put them in query strings (`?access_token=`, `?password=`), Hoard's own invite links
 * carry a single-use code (`/app/signin?invite=`), and an
 * access log kept for months would hold them: the values of parameters named like a secret, and
 * anything shaped like a named token, are left out. Most URLs have neither and are returned as they are.
 */
export function loggedUrl(url: string): string {
  const q = url.indexOf('?');
  if (q === -1) return url.includes(SECRET_PREFIX) ? url.replace(NAMED_TOKEN, `${SECRET_PREFIX}[redacted]`) : url;
  const path = url.slice(0, q);
  const raw = url.slice(q + 1);
  // The access log's every line comes here: a query with no word of a secret's name, no escape that
  // could spell one and no token is the URL as it is, without taking it apart.
  if (!SECRET_NAMES.test(raw) && !raw.includes('%') && !url.includes(SECRET_PREFIX)) return url;
  const query = raw
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq !== -1 && SECRET_NAMES.test(decodedName(pair.slice(0, eq)))) return `${pair.slice(0, eq)}=[redacted]`;
      return pair.includes(SECRET_PREFIX) ? pair.replace(NAMED_TOKEN, `${SECRET_PREFIX}[redacted]`) : pair;
    })
    .join('&');
  return `${path.includes(SECRET_PREFIX) ? path.replace(NAMED_TOKEN, `${SECRET_PREFIX}[redacted]`) : path}?${query}`;
}

function decodedName(name: string): string {
  try {
    return decodeURIComponent(name.replaceAll('+', ' '));
  } catch {
    return name;
  }
}

/** A request's fields in a log line: Fastify's own, with the URL's secrets left out. */
export function requestLogFields(request: FastifyRequest) {
  return { method: request.method, url: loggedUrl(request.url), host: request.host, remoteAddress: request.ip, remotePort: request.socket?.remotePort };
}
