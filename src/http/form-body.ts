import type { FastifyInstance, FastifyRequest } from 'fastify';
import { invalid } from '../errors.ts';

/**
 * Lets the routes of one plugin scope read an HTML form's body (`application/x-www-form-urlencoded`):
 * the plain forms of share pages, which work without a script. Each field once; a field given twice
 * is a 400 rather than a guess at which one counts.
 */
export function acceptFormBodies(app: FastifyInstance, bodyLimit: number): void {
  // The form's own limit, for the 413 to name (the route's bodyLimit is the JSON one).
  app.addHook('onRequest', (request, _reply, done) => {
    formLimits.set(request, bodyLimit);
    done();
  });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit }, (_request, body, done) => {
    const fields = new URLSearchParams(body as string);
    const seen = new Set<string>();
    for (const name of fields.keys()) {
      if (seen.has(name)) return done(invalid(`body.${name}: given more than once`), undefined);
      seen.add(name);
    }
    // fromEntries defines each field as an own property, so a field named __proto__ is just an unknown field.
    done(null, Object.fromEntries(fields));
  });
}

const formLimits = new WeakMap<FastifyRequest, number>();

/** The limit a form body sent to this request's route is read with, if the route reads forms. */
export function formBodyLimitOf(request: FastifyRequest): number | undefined {
  return /^application\/x-www-form-urlencoded\b/i.test(String(request.headers['content-type'] ?? '')) ? formLimits.get(request) : undefined;
}
