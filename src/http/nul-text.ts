import { nulAt, nulMessage } from '../shared/nul-text.ts';

/**
 * Text with a NUL character is a 400 on every route (src/shared/nul-text.ts): this checks the path
 * parameters, the query string and a JSON body, once for every route, before its handler.
 */
export function nulProblem(request: { params: unknown; query: unknown; body: unknown }): string | null {
  const where = nulAt(request.params, 'path') ?? nulAt(request.query, 'query') ?? nulAt(request.body, 'body');
  return where === null ? null : nulMessage(where);
}
