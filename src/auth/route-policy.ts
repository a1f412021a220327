import type { Permission } from './permissions.ts';

/** Named-token scopes (spec, Authentication 3). */
export const scopes = ['files:read', 'files:upload', 'urls:read', 'urls:write'] as const;
export type Scope = (typeof scopes)[number];

/**
 * Who may call a route:
 * - `public`: anyone; no credential is read.
 * - `session`: a browser session only; named tokens and the legacy credential get the generic 401.
 * - `api`: the named-token routes of the specification: a named token holding `scope`, the legacy
 *   credential (no scope allowlist), or a browser session; all need `permission` currently.
 * - `sessionOrLegacy`: a browser session or the legacy credential, never a named token.
 */
export type Access =
  | { kind: 'public' }
  | { kind: 'session'; permission?: Permission }
  | { kind: 'api'; scope: Scope; permission: Permission }
  | { kind: 'sessionOrLegacy'; permission: Permission };

/** `ApiError` is `{success:false, error}`; `Error` is `{error}` (spec, Errors). */
export type ErrorShape = 'Error' | 'ApiError';

export interface RoutePolicy {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Fastify path pattern, e.g. `/api/users/:id`. */
  path: string;
  access: Access;
  errors: ErrorShape;
}

const publicRoute = { kind: 'public' } as const;
const session = (permission?: Permission): Access => (permission ? { kind: 'session', permission } : { kind: 'session' });
const api = (scope: Scope, permission: Permission): Access => ({ kind: 'api', scope, permission });

/**
 * Every route of the product and what it requires: the one table the authorization step reads.
 * A route registered without a row here fails start-up.
 */
export const routePolicies: readonly RoutePolicy[] = [
  { method: 'GET', path: '/api/health', access: publicRoute, errors: 'Error' },
  { method: 'GET', path: '/api/openapi.json', access: publicRoute, errors: 'Error' },

  // Sign-in (contract §3).
  { method: 'POST', path: '/api/auth/register', access: publicRoute, errors: 'ApiError' },
  { method: 'POST', path: '/api/auth/login', access: publicRoute, errors: 'ApiError' },
  { method: 'POST', path: '/api/auth/logout', access: session(), errors: 'ApiError' },
  { method: 'GET', path: '/api/auth/me', access: session(), errors: 'ApiError' },

  // Administration.
  { method: 'GET', path: '/api/users', access: session('users.manage'), errors: 'ApiError' },
  { method: 'POST', path: '/api/users', access: session('users.manage'), errors: 'ApiError' },
  { method: 'PATCH', path: '/api/users/:id', access: session('users.manage'), errors: 'ApiError' },
  { method: 'DELETE', path: '/api/users/:id', access: session('users.manage'), errors: 'ApiError' },
  { method: 'GET', path: '/api/roles', access: session('roles.manage'), errors: 'ApiError' },
  { method: 'POST', path: '/api/roles', access: session('roles.manage'), errors: 'ApiError' },
  { method: 'PATCH', path: '/api/roles/:id', access: session('roles.manage'), errors: 'ApiError' },
  { method: 'DELETE', path: '/api/roles/:id', access: session('roles.manage'), errors: 'ApiError' },
  { method: 'GET', path: '/api/settings', access: session('settings.manage'), errors: 'ApiError' },
  { method: 'PATCH', path: '/api/settings', access: session('settings.manage'), errors: 'ApiError' },
  { method: 'GET', path: '/api/invites', access: session('users.manage'), errors: 'ApiError' },
  { method: 'POST', path: '/api/invites', access: session('users.manage'), errors: 'ApiError' },
  { method: 'DELETE', path: '/api/invites/:id', access: session('users.manage'), errors: 'ApiError' },

  // Named tokens and the legacy upload credential (contract §3).
  { method: 'POST', path: '/api/tokens', access: session('tokens.manage'), errors: 'ApiError' },
  { method: 'GET', path: '/api/tokens', access: session('tokens.manage'), errors: 'ApiError' },
  { method: 'POST', path: '/api/tokens/:id/rotate', access: session('tokens.manage'), errors: 'ApiError' },
  { method: 'DELETE', path: '/api/tokens/:id', access: session('tokens.manage'), errors: 'ApiError' },
  { method: 'GET', path: '/api/profile/upload-token', access: session('tokens.manage'), errors: 'ApiError' },
  { method: 'POST', path: '/api/profile/upload-token', access: session('tokens.manage'), errors: 'ApiError' },
  { method: 'GET', path: '/api/profile/sharex', access: session('tokens.manage'), errors: 'ApiError' },
  { method: 'GET', path: '/api/profile/flameshot', access: session('tokens.manage'), errors: 'ApiError' },
  { method: 'GET', path: '/api/profile/bash', access: session('tokens.manage'), errors: 'ApiError' },

  // The named-token API (spec, Endpoints).
  { method: 'GET', path: '/api/files', access: api('files:read', 'files.read'), errors: 'ApiError' },
  { method: 'POST', path: '/api/files', access: api('files:upload', 'files.upload'), errors: 'Error' },
  { method: 'GET', path: '/api/files/types', access: api('files:read', 'files.read'), errors: 'ApiError' },
  { method: 'GET', path: '/api/files/timeline', access: api('files:read', 'files.read'), errors: 'Error' },
  { method: 'POST', path: '/api/files/chunks', access: api('files:upload', 'files.upload'), errors: 'Error' },
  { method: 'GET', path: '/api/files/chunks', access: api('files:upload', 'files.upload'), errors: 'Error' },
  { method: 'PUT', path: '/api/files/chunks', access: api('files:upload', 'files.upload'), errors: 'Error' },
  { method: 'GET', path: '/api/files/chunks/:uploadId/part/:partNumber', access: api('files:upload', 'files.upload'), errors: 'Error' },
  { method: 'PUT', path: '/api/files/chunks/:uploadId/part/:partNumber', access: api('files:upload', 'files.upload'), errors: 'Error' },
  { method: 'POST', path: '/api/files/chunks/:uploadId/complete', access: api('files:upload', 'files.upload'), errors: 'Error' },
  { method: 'GET', path: '/api/urls', access: api('urls:read', 'links.read'), errors: 'ApiError' },
  { method: 'POST', path: '/api/urls', access: api('urls:write', 'links.create'), errors: 'ApiError' },
  { method: 'DELETE', path: '/api/urls/:id', access: api('urls:write', 'links.delete'), errors: 'ApiError' },
];

const byRoute = new Map(routePolicies.map((p) => [`${p.method} ${p.path}`, p]));

/** HEAD is answered by the GET route and shares its policy. */
export function policyFor(method: string, path: string): RoutePolicy | undefined {
  return byRoute.get(`${method === 'HEAD' ? 'GET' : method} ${path}`);
}
