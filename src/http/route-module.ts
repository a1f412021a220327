import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { AppContext } from '../context.ts';
import type { Principal } from '../auth/principal.ts';
import type { RoutePolicy } from '../auth/route-policy.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
  interface FastifySchema {
    /**
     * For the OpenAPI document only: the body of a route that reads its own (an upload's multipart
     * form, a chunk's raw bytes), which Fastify must not parse or check as `body`.
     */
    documentedBody?: unknown;
    /** For the OpenAPI document only: headers the route reads itself (the upload selectors). */
    documentedHeaders?: unknown;
  }
  interface FastifyContextConfig {
    /** The route's row of the route policy table, attached when the route is registered (app.ts, onRoute). */
    policy?: RoutePolicy;
  }
}

export type App = FastifyInstance<any, any, any, any, ZodTypeProvider>;

/** What app.ts hands every route module. */
export interface RouteModuleOptions {
  ctx: AppContext;
}

/**
 * A route module: a Fastify plugin that registers its routes. app.ts registers each in its own
 * encapsulated scope, so a body parser, hook or decorator one module adds applies to its routes only;
 * what every route needs (cookies, the JSON parser, authorization, audit, error and not-found
 * handling) is on the root, set up before the modules, and inherited by each.
 */
export type RouteModule = (app: App, options: RouteModuleOptions) => void | Promise<void>;

/** The principal of a route whose policy requires one. */
export function principalOf(request: { principal: Principal | null }): Principal {
  if (!request.principal) throw new Error('principalOf() used on a route without authentication');
  return request.principal;
}

/** The caller as the administration log names them (src/audit/admin-actions.ts). */
export function actorOf(request: { principal: Principal | null }): { id: string; email: string } {
  const { user } = principalOf(request);
  return { id: user.id, email: user.email };
}
