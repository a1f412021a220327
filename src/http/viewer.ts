import type { FastifyRequest } from 'fastify';
import type { Viewer } from '../files/file-access.ts';

/** Who asks for a file's bytes or its share page, as the file access rules see them. */
export function viewerOf(request: FastifyRequest): Viewer {
  // A request carrying an Authorization header acts with that credential alone, even with the
  // owner's cookies (spec, Authentication 2), and no credential but a browser session opens a file.
  const userId = request.headers.authorization === undefined ? (request.principal?.user.id ?? null) : null;
  return { userId, cookies: request.cookies };
}
