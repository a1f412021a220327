import type { FastifyInstance } from 'fastify';
import { invalid } from '../errors.ts';

/**
 * Lets the routes of one plugin scope read an HTML form's body (`application/x-www-form-urlencoded`):
 * the plain forms of share pages, which work without a script. Each field once; a field given twice
 * is a 400 rather than a guess at which one counts.
 */
export function acceptFormBodies(app: FastifyInstance, bodyLimit: number): void {
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
