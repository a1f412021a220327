import { unknownFields } from './error-responses.ts';
/**
 * A route whose schema declares no body takes none (contract §3: unknown body properties are a
 * 400): a JSON body with fields, or one that is not an object, is refused before the route acts,
 * as a route with a strict body refuses an unknown field. An empty object is no body, as none is.
 * A route that reads a body of its own kind (`consumes`: an upload's multipart, a chunk's bytes)
 * answers a JSON body in its own words.
 */
export function unexpectedBodyProblem(request: { body: unknown; headers: Record<string, unknown>; is404: boolean; routeOptions: { schema?: { body?: unknown; consumes?: unknown } } }): string | null {
  // No route: the answer is its 404 or 405, whatever the body.
  if (request.is404) return null;
  const schema = request.routeOptions.schema;
  if (schema?.body !== undefined || schema?.consumes !== undefined || request.body === undefined) return null;
  if (!/^application\/json\b/i.test(String(request.headers['content-type'] ?? ''))) return null;
  const body = request.body;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return 'body: this route takes no body';
  const fields = Object.keys(body);
  return fields.length === 0 ? null : `body: ${unknownFields(fields)}`;
}
