import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { AppContext } from '../context.ts';
import type { Principal } from '../auth/principal.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

export type App = FastifyInstance<any, any, any, any, ZodTypeProvider>;

/** A route plugin: registers its routes on the app with the shared context. */
export type RouteModule = (app: App, ctx: AppContext) => void;

/** The principal of a route whose policy requires one. */
export function principalOf(request: { principal: Principal | null }): Principal {
  if (!request.principal) throw new Error('principalOf() used on a route without authentication');
  return request.principal;
}
