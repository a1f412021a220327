import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { AppError, type ErrorKind } from '../errors.ts';
import type { ErrorShape, RoutePolicy } from '../auth/route-policy.ts';
import { errorShapeForUrl } from './route-match.ts';
import { formBodyLimitOf } from './form-body.ts';
import { isDatabaseFull, isDatabaseUnavailable } from '../db/database.ts';
import { isForeignKeyViolation } from '../db/unique-violation.ts';
import { isStorageFull, isStorageMisconfigured, isStorageUnavailable } from '../storage/storage.ts';
import { sizeInWords } from '../shared/sizes.ts';

// Not `import … from 'node:http'`: importing it as an ES module reads every export, including the
// lazy WebSocket ones, which load Node's fetch implementation (undici) with it, about 2 MiB of
// resident memory the server never uses. The module itself is loaded already (Fastify uses it).
const { STATUS_CODES } = process.getBuiltinModule('node:http');

const statusOf: Record<ErrorKind, number> = {
  invalid: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  rate_limited: 429,
  unavailable: 503,
};

const SERVER_ERROR = 'The operation could not be completed.';
const DELETED_MEANWHILE = 'Something this request refers to was deleted while it was being carried out; reload and try again';
/** A full disk under DATA_DIR or under the database (docs/decisions.md, "A full disk"). */
const OUT_OF_SPACE = 'The server is out of storage space; nothing was stored. Ask its administrator to free some.';
/** Retry-After of a 503 for a database or file storage that cannot be used right now. */
const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/**
 * The error shape of the route a request reached; a request that reached none (not found, refused
 * before routing) gets the shape of the route its path matches, else `ApiError`.
 */
export function errorShapeOf(request: { method: string; url: string; routeOptions?: { config?: { policy?: RoutePolicy | undefined } } }): ErrorShape {
  return request.routeOptions?.config?.policy?.errors ?? errorShapeForUrl(request.method, request.url) ?? 'ApiError';
}

export function errorBody(shape: ErrorShape, message: string): { error: string } | { success: false; error: string } {
  return shape === 'ApiError' ? { success: false, error: message } : { error: message };
}

export function sendError(request: FastifyRequest, reply: FastifyReply, status: number, message: string): FastifyReply {
  return reply.code(status).type('application/json; charset=utf-8').send(errorBody(errorShapeOf(request), message));
}

/**
 * A whole error response as bytes, for answers written straight to a connection that has no
 * request object to answer through (a malformed or incomplete request, a body that stopped); the
 * connection is closed after it.
 */
export function rawErrorResponse(status: number, shape: ErrorShape, message: string): string {
  const body = JSON.stringify(errorBody(shape, message));
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nContent-Type: application/json; charset=utf-8\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}

/** At most this many unknown fields are named in a 400, each cut at 64 characters. */
const NAMED_FIELDS = 10;

/**
 * `unknown fields "a", "b" and 3 more`: the unknown fields of a body, quoted. All of them, at any length, made the
 * 400 to a body of 80,000 unknown keys as large as the body itself (949 KB).
 */
export function unknownFields(keys: readonly string[]): string {
  const quoted = keys.slice(0, NAMED_FIELDS).map((key) => `"${key.length > 64 ? `${key.slice(0, 64)}…` : key}"`).join(', ');
  const named = keys.length > NAMED_FIELDS ? `${quoted} and ${keys.length - NAMED_FIELDS} more` : quoted;
  return `${keys.length === 1 ? 'unknown field' : 'unknown fields'} ${named}`;
}

/** Names the field and says what is wrong with it, e.g. `body.email: must be an email address`. */
function describeValidation(error: FastifyError, bodyTypes: readonly string[]): string {
  const first = error.validation?.[0] as { keyword?: string; instancePath?: string; message?: string; params?: { keys?: string[] } } | undefined;
  // `query`, as a person says it and as the NUL check names it (src/http/nul-text.ts), not Fastify's `querystring`.
  const where = error.validationContext === 'querystring' ? 'query' : (error.validationContext ?? 'request');
  const field = first?.instancePath && first.instancePath !== '/' ? `${where}.${first.instancePath.slice(1).replaceAll('/', '.')}` : where;
  if (first?.keyword === 'unrecognized_keys' && first.params?.keys?.length) return `${field}: ${unknownFields(first.params.keys)}`;
  return `${field}: ${plainer(first?.message ?? 'invalid value', where, field, bodyTypes)}`;
}

/**
 * zod's words for the mistakes people make most, in the words of what to do instead: a field left
 * out, a body that is not a JSON object, a query parameter given twice.
 */
function plainer(message: string, where: string, field: string, bodyTypes: readonly string[]): string {
  const [, expected, received] = /^Invalid input: expected ([\w ]+), received (\w+)$/.exec(message) ?? [];
  if (received === 'undefined') return 'is required';
  // A route that also reads a form (unlock: the share page's password form) says so, or a caller
  // who sent one as text/plain is told JSON is the only way.
  if (field === 'body' && (received === 'null' || received === 'string')) return notAnObject(bodyTypes);
  if (where === 'query' && received === 'array') return 'give this parameter once';
  // "expected int, received number": 1.5 where a count or a size goes.
  if (expected === 'int' && received === 'number') return 'must be a whole number';
  // "expected string, received null" said as what the field takes.
  if (expected !== undefined && received !== undefined) return `must be ${/^[aeiou]/.test(expected) ? 'an' : 'a'} ${expected}, not ${received === 'null' ? 'null' : `${/^[aeiou]/.test(received) ? 'an' : 'a'} ${received}`}`;
  return boundInWords(message) ?? message;
}

/**
 * zod's bounds ("Too small: expected array to have >=1 items") as what passes: `must not be empty`,
 * `must be at most 200 characters`, `must have at most 500 items`, `must be at least 1`.
 */
function boundInWords(message: string): string | null {
  const [, side, kind, operator, limit, unit] = /^Too (small|big): expected (string|array|number|set) to (?:have|be) (>=|<=|>|<)(\d+(?:\.\d+)?)(?: (characters?|items?))?$/.exec(message) ?? [];
  if (side === undefined || limit === undefined) return null;
  const n = Number(limit);
  if (kind === 'number') return `must be ${operator === '>=' ? 'at least' : operator === '>' ? 'more than' : operator === '<=' ? 'at most' : 'less than'} ${limit}`;
  const noun = kind === 'string' ? (unit ?? 'characters').replace(/s?$/, n === 1 ? '' : 's') : n === 1 ? 'item' : 'items';
  if (side === 'small' && operator === '>=' && n === 1) return kind === 'string' ? 'must not be empty' : 'must not be empty: give at least one';
  const verb = kind === 'string' ? 'be' : 'have';
  return `must ${verb} ${side === 'small' ? 'at least' : 'at most'} ${limit} ${noun}`;
}

/** Headers a route sets for the bytes it is about to send, which an error sent instead must not carry. */
const REPRESENTATION_HEADERS = ['etag', 'last-modified', 'content-disposition', 'accept-ranges', 'content-range', 'content-length'];

/**
 * Takes off a reply the headers a route set for a file's bytes, when something else is sent instead
 * (an error, a 416): else it would go out with the file's ETag, its name for a download, and a
 * public max-age that lets caches keep it for the file.
 */
export function dropFileHeaders(reply: FastifyReply): FastifyReply {
  for (const header of REPRESENTATION_HEADERS) reply.removeHeader(header);
  const caching = reply.getHeader('cache-control');
  if (caching !== undefined && !String(caching).includes('no-store')) reply.header('Cache-Control', 'no-store');
  return reply;
}

/** What a body that is no JSON object (`null`, JSON sent as text) is told, after `body: `. */
const notAnObject = (bodyTypes: readonly string[]) =>
  `must be a JSON object${bodyTypes.includes('application/x-www-form-urlencoded') ? ' or a form' : ''}, sent with Content-Type: ${bodyTypes.join(' or ')}`;

/**
 * The 400 of a JSON body that is `null` on a route that reads a body: refused as it is parsed, since
 * the routes whose body may be left out (extraction's defaults, an invite without a note) take
 * Fastify's null for "no body at all", and a `null` sent was taken for that and acted on.
 */
export function nullBodyProblem(request: FastifyRequest): string | null {
  return request.routeOptions.schema?.body === undefined ? null : `body: ${notAnObject(bodyTypesOf(request))}`;
}

/**
 * What a route's body is to be sent as, when it came as another: the types it declares it reads (`consumes`:
 * an upload's form, a chunk's bytes, unlock's JSON or password form), else JSON, which every other
 * route with a body reads.
 */
function bodyTypesOf(request: FastifyRequest): string[] {
  const consumes = (request.routeOptions.schema as { consumes?: unknown } | undefined)?.consumes;
  return Array.isArray(consumes) && consumes.length > 0 ? consumes.map(String) : ['application/json'];
}

const bodyTypeHint = (request: FastifyRequest) => `send the body as ${bodyTypesOf(request).join(' or ')}`;

export function handleError(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  // A route that failed after preparing a file's answer (its store could not be read, say).
  dropFileHeaders(reply);
  if (error instanceof AppError) {
    // A 429, a 503, or a 409 that passes once an earlier request is done (a part still arriving).
    if (error.retryAfter !== undefined) reply.header('Retry-After', String(error.retryAfter));
    return sendError(request, reply, statusOf[error.kind], error.message);
  }
  const fastifyError = error as FastifyError;
  if (hasZodFastifySchemaValidationErrors(fastifyError)) return sendError(request, reply, 400, describeValidation(fastifyError, bodyTypesOf(request)));
  if (fastifyError.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    // A route may document another answer (spec, POST /api/urls: "Malformed JSON reaches the 500 handler").
    if (request.routeOptions.config.policy?.malformedJson === 'server-error') {
      request.log.info('malformed JSON body answered with the documented 500');
      return sendError(request, reply, 500, SERVER_ERROR);
    }
    return sendError(request, reply, 400, 'The request body is not valid JSON');
  }
  if (fastifyError.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    // A body of a type the route does not read: no parser for it in the route's scope. A 400, an
    // invalid body, as the specification's status lists have it: none of its routes lists a 415.
    return sendError(request, reply, 400, `Unsupported Content-Type: ${request.headers['content-type'] ?? 'none'}; ${bodyTypeHint(request)}`);
  }
  if (fastifyError.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    // Fastify's words name no size: a client cannot tell what would pass.
    const limit = formBodyLimitOf(request) ?? request.routeOptions.bodyLimit;
    return sendError(request, reply, 413, `The request body is too large${limit ? `: this route takes at most ${sizeInWords(limit)}` : ''}`);
  }
  const status = fastifyError.statusCode;
  if (status !== undefined && status >= 400 && status < 500) return sendError(request, reply, status, fastifyError.message);
  // A folder, tag or file the request named, checked and then deleted by another request before
  // this one wrote: the client's view is out of date, not the server broken.
  if (isForeignKeyViolation(error)) {
    request.log.info({ error: error.message }, 'a row the request refers to was deleted meanwhile');
    return sendError(request, reply, 409, DELETED_MEANWHILE);
  }
  // PostgreSQL restarting or unreachable, SQLite locked by another process, the object store
  // unreachable or answering "later" (after the S3 client's own retries): worth a retry shortly.
  const unavailable = isDatabaseUnavailable(error) ? 'database' : isStorageUnavailable(error) ? 'file storage' : null;
  if (unavailable) {
    const cause = error.cause instanceof Error ? error.cause.message : undefined;
    request.log.warn({ error: error.message, code: (error as { code?: unknown }).code, cause }, `${unavailable} unavailable`);
    reply.header('Retry-After', String(UNAVAILABLE_RETRY_AFTER_SECONDS));
    return sendError(request, reply, 503, `The ${unavailable} is unavailable right now; try again shortly`);
  }
  // A bucket missing, credentials refused: the operator's to mend, said in the log in the store's
  // own words (a 500 with a stack said nothing of which setting); to the client, unavailable.
  if (isStorageMisconfigured(error)) {
    request.log.error({ error: error.message, code: error.name }, 'the file storage refuses Hoard: check S3_BUCKET, S3_REGION, S3_ENDPOINT and the credentials');
    reply.header('Retry-After', String(UNAVAILABLE_RETRY_AFTER_SECONDS));
    return sendError(request, reply, 503, 'The file storage is unavailable right now; try again shortly');
  }
  // 507 Insufficient Storage: the server's state, which the administrator has to mend; an error in
  // the log (without a stack: where it happened says nothing the code does not) so it is seen.
  if (isStorageFull(error) || isDatabaseFull(error)) {
    request.log.error({ error: error.message, code: (error as { code?: unknown }).code }, 'out of storage space');
    return sendError(request, reply, 507, OUT_OF_SPACE);
  }
  request.log.error({ err: error }, 'request failed');
  return sendError(request, reply, 500, SERVER_ERROR);
}
