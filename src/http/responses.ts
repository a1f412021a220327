import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { $ZodType } from 'zod/v4/core';
import { jsonSchemaTransform, jsonSchemaTransformObject, serializerCompiler as zodSerializerCompiler } from 'fastify-type-provider-zod';
import { apiErrorSchema, errorSchema } from '../api/errors.ts';
import { webhookDocumentation } from './webhook-docs.ts';
import { permissionsOf, type Access, type ErrorShape, type RoutePolicy } from '../auth/route-policy.ts';

/**
 * Response schemas on routes (docs/architecture.md, "One definition of the API"). A route declares
 * its answers in `schema.response`: a zod schema from src/api/ for a JSON answer, or one of the
 * helpers below for an answer that is not JSON. Error bodies come from the route's row of the route
 * policy table (`errorResponses`), so no route writes them.
 */

// `type: 'null'` is how the OpenAPI generator (@fastify/swagger) is told an answer has no body.

/** An answer without a body (204, 304). */
export function noBody(description: string): { type: 'null'; description: string } {
  return { type: 'null', description };
}

/**
 * An onSend hook for the routes that answer 304. Fastify's answer to a HEAD request whose GET route
 * sends no body carries `Content-Length: 0`, which a 304 must not (RFC 9110 §8.6: a 304 carries no
 * length but that of the bytes a 200 would send). Handed an empty stream instead, Fastify sends the
 * 304 without a length, as it does for GET.
 */
export async function headNotModifiedWithoutLength(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  return request.method === 'HEAD' && reply.statusCode === 304 ? Readable.from([]) : payload;
}

/** A redirect: `Location` says where; no body. */
export function redirect(description: string): { type: 'null'; description: string } {
  return { type: 'null', description };
}

const binary = z.string().meta({ format: 'binary' });

/** File bytes, or another non-JSON body, of the given media type(s). */
export function bytes(description: string, mediaType = '*/*'): { description: string; content: Record<string, { schema: z.ZodType }> } {
  return { description, content: { [mediaType]: { schema: binary } } };
}

/** An HTML page. */
export function html(description: string): { description: string; content: Record<string, { schema: z.ZodType }> } {
  return { description, content: { 'text/html': { schema: z.string() } } };
}

export function errorSchemaOf(shape: ErrorShape): z.ZodType {
  return shape === 'ApiError' ? apiErrorSchema : errorSchema;
}

/** What every route may answer besides its own responses: its error shape, for 4xx and 5xx. */
export function errorResponses(policy: RoutePolicy): Record<'4xx' | '5xx', z.ZodType> {
  const schema = errorSchemaOf(policy.errors);
  return { '4xx': schema, '5xx': schema };
}

type ResponseEntry = $ZodType | { type?: 'null'; description?: string; content?: Record<string, { schema: unknown }> };

/** The zod schema of a response entry for a JSON answer, if it has one. */
export function jsonSchemaOf(entry: ResponseEntry | undefined): $ZodType | undefined {
  if (entry === undefined) return undefined;
  if (entry instanceof $ZodType) return entry;
  const schema = entry.content?.['application/json']?.schema;
  return schema instanceof $ZodType ? schema : undefined;
}

/**
 * The serializer of every JSON answer: zod encodes the value with the route's schema, which keeps
 * only the fields the schema names, so no internal column leaves through a spread. Entries that
 * describe a body which is never serialised (bytes, HTML, no body) get a plain JSON.stringify.
 */
export const serializerCompiler: typeof zodSerializerCompiler = (route) => {
  if (route.schema instanceof $ZodType) return zodSerializerCompiler(route);
  return (data: unknown) => JSON.stringify(data);
};

/**
 * Why a route cannot be registered when answers are checked (tests): it declares no answer of its
 * own (a 1xx–3xx status; errors come from the policy row). Null when it does.
 */
export function missingResponses(route: { method: string; url: string; schema?: { response?: unknown } }): string | null {
  if (route.method === 'HEAD') return null;
  const statuses = Object.keys((route.schema?.response ?? {}) as Record<string, unknown>);
  return statuses.some((status) => /^[123]/.test(status)) ? null : `Route ${route.method} ${route.url} declares no response schema`;
}

/** The response entry a status code uses: its own, else its class (`4xx`), else `default`. */
export function responseEntryFor(response: Record<string, ResponseEntry> | undefined, status: number): ResponseEntry | undefined {
  if (!response) return undefined;
  return response[String(status)] ?? response[`${String(status)[0]}xx`] ?? response['default'];
}

/**
 * The check the tests run on every answer (`CHECK_RESPONSES`): a JSON body must match the schema
 * its route declares for its status. Returns what is wrong, or null.
 */
export function answerProblem(response: Record<string, ResponseEntry> | undefined, status: number, contentType: string | undefined, payload: unknown, fallback: ErrorShape | null): string | null {
  if (!contentType || !/^application\/json\b/i.test(contentType)) return null;
  const entry = responseEntryFor(response, status);
  // A body kept as bytes (the listing cache keeps Buffers) is checked as the text it is.
  if (payload instanceof Uint8Array) payload = new TextDecoder().decode(payload);
  if (typeof payload !== 'string') {
    // Streamed bytes, or no body, on a status the route declares so: a stored file whose type is JSON.
    if (entry !== undefined && jsonSchemaOf(entry) === undefined) return null;
    return 'a JSON answer that is not a string by the time it is sent';
  }
  const schema = jsonSchemaOf(entry) ?? (entry === undefined && fallback && status >= 400 ? errorSchemaOf(fallback) : undefined);
  if (!schema) return `no JSON response schema for status ${status}`;
  let body: unknown;
  try {
    body = JSON.parse(payload);
  } catch {
    return 'a body that is not JSON';
  }
  const result = z.safeParse(schema as z.ZodType, body);
  return result.success ? null : `${z.prettifyError(result.error)}\n${payload.slice(0, 2000)}`;
}

/**
 * The OpenAPI security of an operation, from its route policy row: which credentials it takes and,
 * for the named-token routes, the scope (spec, Authentication 3) and permission they need.
 */
export function securityOf(access: Access): { security: Array<Record<string, string[]>>; description?: string } {
  switch (access.kind) {
    case 'public':
      return { security: [] };
    case 'browser':
      return { security: [], description: 'Refuses API credentials: a request with an Authorization header gets the generic 401.' };
    case 'publicWithSession':
      return { security: [{}, { session: [] }] };
    case 'session': {
      const needed = permissionsOf(access);
      if (needed.length === 0) return { security: [{ session: [] }] };
      return { security: [{ session: [] }], description: `Needs the permission${needed.length > 1 ? 's' : ''} ${needed.map((p) => `\`${p}\``).join(' and ')}.` };
    }
    case 'api':
      return {
        security: [{ bearer: [access.scope] }, { legacy: [] }, { session: [] }],
        description: `A named token needs the scope \`${access.scope}\`; every caller needs the permission \`${access.permission}\`.`,
      };
    case 'sessionOrLegacy':
      return { security: [{ session: [] }, { legacy: [] }], description: `Needs the permission \`${access.permission}\`.` };
  }
}

type SwaggerRoute = Parameters<typeof jsonSchemaTransform>[0];
type RouteSchema = Record<string, unknown> & { response?: Record<string, ResponseEntry>; hide?: boolean; description?: string };

/**
 * Turns a route's zod schemas into the OpenAPI operation (fastify-type-provider-zod does the zod
 * part) and adds what the route policy table says: the credentials it takes, and for the
 * named-token routes the scope and permission, so neither is written twice.
 */
export function openApiTransform(policyOf: (method: string, url: string) => RoutePolicy | undefined) {
  return (document: SwaggerRoute) => {
    const { url, route } = document;
    const schema = document.schema as RouteSchema | undefined;
    const method = Array.isArray(route.method) ? route.method[0]! : route.method;
    const policy = policyOf(method, url);
    if (!schema || schema.hide || !policy) return jsonSchemaTransform(document);
    // Entries without a body schema (no body, a redirect) are passed through as they are.
    const plain: Record<string, ResponseEntry> = {};
    const zodEntries: Record<string, ResponseEntry> = {};
    for (const [status, entry] of Object.entries(schema.response ?? {})) {
      if (entry instanceof $ZodType || entry.content) zodEntries[status] = entry;
      else plain[status] = entry;
    }
    // A body or headers the route reads itself are documented as if Fastify read them.
    const { documentedBody, documentedHeaders, ...own } = schema;
    const described = { ...own, ...(documentedBody === undefined ? {} : { body: documentedBody }), ...(documentedHeaders === undefined ? {} : { headers: documentedHeaders }) };
    const result = jsonSchemaTransform({ ...document, schema: { ...described, response: zodEntries } });
    const out = result.schema as Record<string, unknown> & { response?: Record<string, unknown> };
    out.response = { ...(out.response ?? {}), ...plain };
    const { security, description } = securityOf(policy.access);
    out.security = security;
    // A body every field of which has its default may be left out (`.nullish()`): the library
    // marks every body required, so the document says otherwise where the route's schema does.
    if (schema.body instanceof $ZodType && (schema.body as z.ZodType).safeParse(undefined).success) out[OPTIONAL_BODY] = true;
    // The archive routes refuse API credentials whatever else they take (contract §9): a client
    // that sends its token with every request must learn it here, not from a 401.
    const refusesCredentials = policy.archive ? 'Refuses API credentials: a request with an Authorization header gets the generic 401, also on a public file.' : undefined;
    // What adds a way into the account needs a recent sign-in (docs/decisions.md, "Recent sign-in").
    const recentSignIn = policy.recentSignIn ? 'Needs a sign-in, or a password confirmed with POST /api/auth/confirm, within the last hour: else 403, naming that route.' : undefined;
    const said = [schema.description, description, refusesCredentials, recentSignIn].filter(Boolean);
    if (said.length > 0) out.description = said.join('\n\n');
    if (policy.access.kind === 'api') {
      out['x-scope'] = policy.access.scope;
      out['x-permission'] = policy.access.permission;
    } else if ('permission' in policy.access && policy.access.permission !== undefined) {
      out['x-permission'] = policy.access.permission;
    }
    return result;
  };
}

/** The success envelope of the JSON API (src/api/envelope.ts), typed so a route's answer checks against its schema. */
export function ok<T>(data: T): { success: true; data: T } {
  return { success: true, data };
}

/**
 * The document's components: the named schemas of src/api/ (fastify-type-provider-zod), keeping
 * only those an operation refers to, directly or through another component; its input copies of
 * response-only records would otherwise be listed twice.
 */
export function openApiComponents(document: Parameters<typeof jsonSchemaTransformObject>[0]): ReturnType<typeof jsonSchemaTransformObject> {
  const { webhooks, schemas: webhookSchemas } = webhookDocumentation();
  const transformed = jsonSchemaTransformObject(document) as { paths?: unknown; components?: { schemas?: Record<string, unknown> } };
  const result = { ...transformed, webhooks };
  const schemas = { ...transformed.components?.schemas, ...webhookSchemas };
  const referenced = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (value === null || typeof value !== 'object') return;
    for (const [key, inner] of Object.entries(value)) {
      if (key === '$ref' && typeof inner === 'string' && inner.startsWith('#/components/schemas/')) {
        const name = inner.slice('#/components/schemas/'.length);
        if (!referenced.has(name)) {
          referenced.add(name);
          visit(schemas[name]);
        }
      } else visit(inner);
    }
  };
  visit(result.paths);
  visit(result.webhooks);
  const components = { ...result.components, schemas: Object.fromEntries(Object.entries(schemas).filter(([name]) => referenced.has(name))) };
  describeSharedAnswers(result.paths);
  return { ...result, components } as ReturnType<typeof jsonSchemaTransformObject>;
}

type DocumentedResponse = { description?: string; headers?: Record<string, unknown> };
/** Carried from an operation's transform to the document's (the library copies `x-` keys across). */
const OPTIONAL_BODY = 'x-optional-body';

const retryAfter = { description: 'Seconds to wait before trying again', schema: { type: 'integer', minimum: 0 } };
const sharedAnswers: Record<string, DocumentedResponse> = {
  '4XX': {
    description:
      'A client mistake, said in `error` for a person to read: 400 an invalid request, 401 the one generic `Unauthorized` (missing, unknown, expired or revoked credentials, a missing scope), 403 a permission the account lacks, 404 nothing of yours by that ID, 409 a conflict with the current state (with `Retry-After` when it passes by itself: a chunk part or a completion still under way in another request, after which the upload goes on; a webhook resend while a copy of the event is on its way), 413 over a size limit or the quota, 429 too many requests (with `Retry-After`)',
    headers: { 'Retry-After': { ...retryAfter, description: 'With a 429, or a 409 that passes by itself: seconds to wait before trying again' } },
  },
  '5XX': {
    description: 'A server error; a 503 (the database or file storage unavailable for a moment, every archive slot busy, an upload that stood still until its bytes were taken for abandoned) carries `Retry-After`, a 507 says the server is out of storage space',
    headers: { 'Retry-After': { ...retryAfter, description: 'With a 503: seconds to wait before trying again' } },
  },
};

/**
 * What the routes' schemas leave to the library's defaults: the error ranges every route answers
 * through are said once here (with the `Retry-After` of a 429 or a 503), a redirect's `Location` is
 * named, a success answer says it is one rather than "Default Response", and a body that may be
 * left out is not required.
 */
function describeSharedAnswers(paths: unknown): void {
  for (const operations of Object.values((paths ?? {}) as Record<string, Record<string, { responses?: Record<string, DocumentedResponse>; requestBody?: { required?: boolean }; [OPTIONAL_BODY]?: boolean }>>)) {
    for (const operation of Object.values(operations)) {
      if (operation[OPTIONAL_BODY]) {
        if (operation.requestBody) operation.requestBody.required = false;
        delete operation[OPTIONAL_BODY];
      }
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const shared = sharedAnswers[status];
        if (shared) Object.assign(response, shared);
        else if (/^3\d\d$/.test(status) && status !== '304') response.headers = { Location: { description: 'Where to go', schema: { type: 'string', format: 'uri-reference' } }, ...response.headers };
        else if (/^2\d\d$/.test(status) && response.description === 'Default Response') response.description = 'Success';
      }
    }
  }
}
