/**
 * Errors the domain raises for the caller's mistakes. They name a kind, not an HTTP status, so the
 * domain stays independent of the transport; the HTTP layer maps kinds to statuses in one place.
 */
export type ErrorKind =
  | 'invalid'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'too_large'
  | 'rate_limited'
  /** The server could not finish the request now (not the client's mistake); Retry-After says when to try again. */
  | 'unavailable';

export class AppError extends Error {
  readonly kind: ErrorKind;
  /** Seconds after which the request may pass: a 429, or a 409 that lasts only while another request is under way. */
  readonly retryAfter: number | undefined;

  constructor(kind: ErrorKind, message: string, retryAfter?: number) {
    super(message);
    this.name = 'AppError';
    this.kind = kind;
    this.retryAfter = retryAfter;
  }
}

export const PERMISSION_DENIED = 'You do not have permission to perform this action.';

export const invalid = (message: string) => new AppError('invalid', message);
export const forbidden = (message: string = PERMISSION_DENIED) => new AppError('forbidden', message);
export const notFound = (message: string) => new AppError('not_found', message);
/** A 409; with `retryAfter`, one that passes by itself once another request is done (the session goes on). */
export const conflict = (message: string, retryAfter?: number) => new AppError('conflict', message, retryAfter);
export const tooLarge = (message: string) => new AppError('too_large', message);
export const rateLimited = (message: string, retryAfter: number) => new AppError('rate_limited', message, retryAfter);
export const unavailable = (message: string, retryAfter: number) => new AppError('unavailable', message, retryAfter);
/** The generic 401: error `Unauthorized`, the cause not revealed (spec, Errors: 401). */
export const unauthorized = () => new AppError('unauthorized', 'Unauthorized');
/**
 * The caller's own account row is gone: an administrator deleted it while the request was under
 * way. Its credential identifies no account any more, so the request is the generic 401, not the
 * 500 of a missing row (for Kysely's executeTakeFirstOrThrow).
 */
export const accountGone = (): Error => unauthorized();
