import type { Permission } from './permissions.ts';
import type { Scope } from '../api/scopes.ts';

// Named-token scopes are part of the API's shapes (src/api/), which the web app shares.
export { scopes, type Scope } from '../api/scopes.ts';

/**
 * Who may call a route:
 * - `public`: anyone; no credential is read.
 * - `browser`: anyone, as a browser comes (sign-in, registration, a file's unlock form); a request
 *   carrying an Authorization header (a named token, the legacy credential, anything) gets the
 *   generic 401 (contract §3: "All of these reject named tokens and the legacy upload credential").
 * - `publicWithSession`: anyone, and a browser session (if any) is recognised, e.g. so an owner sees
 *   their own private file. Bearer credentials are ignored: tokens never open file bytes.
 * - `session`: a browser session only; named tokens and the legacy credential get the generic 401.
 * - `api`: the named-token routes of the specification: a named token holding `scope`, the legacy
 *   credential (no scope allowlist), or a browser session; all need `permission` currently.
 * - `sessionOrLegacy`: a browser session or the legacy credential, never a named token.
 */
export type Access =
  | { kind: 'public' }
  | { kind: 'browser' }
  | { kind: 'publicWithSession' }
  | { kind: 'session'; permission?: Permission | readonly Permission[] }
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
  /**
   * How a body that is not valid JSON is answered: a 400 unless the route documents otherwise
   * (`server-error`: the 500 the specification gives for `POST /api/urls`).
   */
  malformedJson?: 'server-error';
  /** Counts toward the per-IP upload-start rate limit (spec, Limits). */
  uploadStart?: true;
  /**
   * Finalizes a chunked upload: a named token that was revoked or expired since is answered with 403
   * rather than the generic 401 (spec, POST /api/files/chunks/{uploadId}/complete).
   */
  finalizesUpload?: true;
  /**
   * An archive route (contract §9): any Authorization header is the generic 401, whatever else the
   * request carries, and the work takes a slot of the process's archive capacity.
   */
  archive?: true;
  /**
   * Adds a way into the account (a passkey, a second factor): the session must have signed in or
   * confirmed its password within RECENT_SIGN_IN_MS (src/auth/sessions.ts), else 403.
   */
  recentSignIn?: true;
}

const publicRoute = { kind: 'public' } as const;
const browserRoute = { kind: 'browser' } as const;
const publicWithSession = { kind: 'publicWithSession' } as const;
/** A browser-session route; with several permissions, the caller needs every one of them. */
const session = (...permissions: Permission[]): Access =>
  permissions.length === 0 ? { kind: 'session' } : { kind: 'session', permission: permissions.length === 1 ? permissions[0]! : permissions };
const api = (scope: Scope, permission: Permission): Access => ({ kind: 'api', scope, permission });

/**
 * Every route of the product and what it requires: the one table the authorization step reads.
 * A route registered without a row here fails start-up.
 */
export const routePolicies: readonly RoutePolicy[] = [
  { method: 'GET', path: '/api/health', access: publicRoute, errors: 'Error' },
  { method: 'GET', path: '/api/openapi.json', access: publicRoute, errors: 'Error' },
  // The API reference page rendered from that document (src/http/routes/api-docs.ts): the redirect
  // to the page, the page, and its script bundle.
  { method: 'GET', path: '/api/docs', access: publicRoute, errors: 'Error' },
  { method: 'GET', path: '/api/docs/', access: publicRoute, errors: 'Error' },
  { method: 'GET', path: '/api/docs/js/scalar.js', access: publicRoute, errors: 'Error' },

  // Sign-in (contract §3).
  { method: 'POST', path: '/api/auth/register', access: browserRoute, errors: 'ApiError' },
  { method: 'POST', path: '/api/auth/login', access: browserRoute, errors: 'ApiError' },
  { method: 'POST', path: '/api/auth/logout', access: session(), errors: 'ApiError' },
  { method: 'GET', path: '/api/auth/me', access: session(), errors: 'ApiError' },
  // Passkeys (contract §8): managed with a browser session; the sign-in steps are public.
  { method: 'POST', path: '/api/auth/passkeys/options', access: session(), errors: 'ApiError', recentSignIn: true },
  { method: 'POST', path: '/api/auth/passkeys', access: session(), errors: 'ApiError', recentSignIn: true },
  { method: 'GET', path: '/api/auth/passkeys', access: session(), errors: 'ApiError' },
  { method: 'PATCH', path: '/api/auth/passkeys/:id', access: session(), errors: 'ApiError' },
  { method: 'DELETE', path: '/api/auth/passkeys/:id', access: session(), errors: 'ApiError' },
  { method: 'POST', path: '/api/auth/passkey/options', access: publicRoute, errors: 'ApiError' },
  { method: 'POST', path: '/api/auth/passkey', access: publicRoute, errors: 'ApiError' },
  // Two-factor codes (contract §8): the code step of sign-in is public; the rest, browser session only.
  { method: 'POST', path: '/api/auth/login/two-factor', access: publicRoute, errors: 'ApiError' },
  { method: 'POST', path: '/api/auth/totp/setup', access: session(), errors: 'ApiError', recentSignIn: true },
  { method: 'POST', path: '/api/auth/totp/enable', access: session(), errors: 'ApiError', recentSignIn: true },
  { method: 'POST', path: '/api/auth/totp/disable', access: session(), errors: 'ApiError' },
  { method: 'POST', path: '/api/auth/recovery-codes', access: session(), errors: 'ApiError' },
  // Archives in the owner's library (contract §9): browser session only.
  { method: 'GET', path: '/api/archives/:fileId', access: session('files.read'), errors: 'ApiError', archive: true },
  { method: 'GET', path: '/api/archives/:fileId/entry', access: session('files.read'), errors: 'ApiError', archive: true },
  { method: 'POST', path: '/api/archives/:fileId/extract', access: session('files.upload'), errors: 'ApiError', archive: true },
  { method: 'POST', path: '/api/archives', access: session('files.read', 'files.upload'), errors: 'ApiError', archive: true },
  // A shared archive's manifest and entry (contract §9): the file's visibility and password rules,
  // the password in the body or the file's unlock cookie; the owner's session sees a private file as
  // the share page does. No extraction.
  { method: 'POST', path: '/api/share/:urlId/:name/archive', access: publicWithSession, errors: 'ApiError', archive: true },
  { method: 'POST', path: '/api/share/:urlId/:name/archive/entry', access: publicWithSession, errors: 'ApiError', archive: true },
  // Session history (contract §8): browser session only.
  { method: 'GET', path: '/api/auth/sessions', access: session(), errors: 'ApiError' },
  { method: 'DELETE', path: '/api/auth/sessions/:id', access: session(), errors: 'ApiError' },
  { method: 'DELETE', path: '/api/auth/sessions', access: session(), errors: 'ApiError' },
  // The session proves the password again, for what needs a recent sign-in (docs/decisions.md, "Recent sign-in").
  { method: 'GET', path: '/api/auth/confirm', access: session(), errors: 'ApiError' },
  { method: 'POST', path: '/api/auth/confirm', access: session(), errors: 'ApiError' },
  // First-run state for the web app's sign-in screen (docs/decisions.md, GET /api/setup).
  { method: 'GET', path: '/api/setup', access: publicRoute, errors: 'ApiError' },

  // Administration.
  { method: 'GET', path: '/api/users', access: session('users.manage'), errors: 'ApiError' },
  // Audit queries (spec: they need audit.read; rule 11: never a named token or the legacy credential).
  { method: 'GET', path: '/api/audit', access: session('audit.read'), errors: 'ApiError' },
  // The administration log (docs/decisions.md): read as the audit records are.
  { method: 'GET', path: '/api/admin/actions', access: session('audit.read'), errors: 'ApiError' },
  { method: 'POST', path: '/api/users', access: session('users.manage'), errors: 'ApiError' },
  { method: 'PATCH', path: '/api/users/:id', access: session('users.manage'), errors: 'ApiError' },
  { method: 'DELETE', path: '/api/users/:id', access: session('users.manage'), errors: 'ApiError' },
  // An administrator turns another account's two-factor off, for a locked-out user (contract §8).
  { method: 'DELETE', path: '/api/users/:id/two-factor', access: session('users.manage'), errors: 'ApiError' },
  { method: 'GET', path: '/api/roles', access: session('roles.manage'), errors: 'ApiError' },
  { method: 'POST', path: '/api/roles', access: session('roles.manage'), errors: 'ApiError' },
  { method: 'PATCH', path: '/api/roles/:id', access: session('roles.manage'), errors: 'ApiError' },
  { method: 'DELETE', path: '/api/roles/:id', access: session('roles.manage'), errors: 'ApiError' },
  { method: 'GET', path: '/api/settings', access: session('settings.manage'), errors: 'ApiError' },
  { method: 'PATCH', path: '/api/settings', access: session('settings.manage'), errors: 'ApiError' },
  { method: 'GET', path: '/api/settings/media', access: session('settings.manage'), errors: 'ApiError' },
  { method: 'GET', path: '/api/invites', access: session('users.manage'), errors: 'ApiError' },
  { method: 'POST', path: '/api/invites', access: session('users.manage'), errors: 'ApiError' },
  { method: 'DELETE', path: '/api/invites/:id', access: session('users.manage'), errors: 'ApiError' },
  // Taking down one file or short link of any account (docs/decisions.md, "Taking down content").
  { method: 'GET', path: '/api/moderation/lookup', access: session('users.manage'), errors: 'ApiError' },
  { method: 'DELETE', path: '/api/moderation/files/:id', access: session('users.manage'), errors: 'ApiError' },
  { method: 'DELETE', path: '/api/moderation/links/:id', access: session('users.manage'), errors: 'ApiError' },

  // Named tokens and the legacy upload credential (contract §3).
  { method: 'POST', path: '/api/tokens', access: session('tokens.manage'), errors: 'ApiError' },
  { method: 'GET', path: '/api/tokens', access: session('tokens.manage'), errors: 'ApiError' },
  { method: 'POST', path: '/api/tokens/:id/rotate', access: session('tokens.manage'), errors: 'ApiError' },
  { method: 'DELETE', path: '/api/tokens/:id', access: session('tokens.manage'), errors: 'ApiError' },
  { method: 'GET', path: '/api/profile/upload-token', access: session('tokens.manage'), errors: 'ApiError' },
  { method: 'POST', path: '/api/profile/upload-token', access: session('tokens.manage'), errors: 'ApiError' },
  { method: 'GET', path: '/api/profile/sharex', access: session('tokens.manage'), errors: 'ApiError' },
  { method: 'GET', path: '/api/profile/sharex-shortener', access: session('tokens.manage'), errors: 'ApiError' },
  { method: 'GET', path: '/api/profile/flameshot', access: session('tokens.manage'), errors: 'ApiError' },
  { method: 'GET', path: '/api/profile/bash', access: session('tokens.manage'), errors: 'ApiError' },

  // Webhooks (contract §3; spec, Events: browser session only).
  { method: 'POST', path: '/api/webhooks', access: session('webhooks.manage'), errors: 'ApiError' },
  { method: 'GET', path: '/api/webhooks', access: session('webhooks.manage'), errors: 'ApiError' },
  { method: 'PATCH', path: '/api/webhooks/:id', access: session('webhooks.manage'), errors: 'ApiError' },
  { method: 'DELETE', path: '/api/webhooks/:id', access: session('webhooks.manage'), errors: 'ApiError' },
  { method: 'POST', path: '/api/webhooks/:id/test', access: session('webhooks.manage'), errors: 'ApiError' },
  { method: 'POST', path: '/api/webhooks/:id/rotate-secret', access: session('webhooks.manage'), errors: 'ApiError' },
  { method: 'GET', path: '/api/webhooks/:id/deliveries', access: session('webhooks.manage'), errors: 'ApiError' },
  { method: 'POST', path: '/api/webhooks/:id/deliveries/:deliveryId/resend', access: session('webhooks.manage'), errors: 'ApiError' },

  // The named-token API (spec, Endpoints).
  { method: 'GET', path: '/api/files', access: api('files:read', 'files.read'), errors: 'ApiError' },
  { method: 'POST', path: '/api/files', access: api('files:upload', 'files.upload'), errors: 'Error', uploadStart: true },
  { method: 'GET', path: '/api/files/types', access: api('files:read', 'files.read'), errors: 'ApiError' },
  { method: 'GET', path: '/api/files/timeline', access: api('files:read', 'files.read'), errors: 'Error' },
  { method: 'POST', path: '/api/files/chunks', access: api('files:upload', 'files.upload'), errors: 'Error', uploadStart: true },
  { method: 'GET', path: '/api/files/chunks', access: api('files:upload', 'files.upload'), errors: 'Error' },
  { method: 'PUT', path: '/api/files/chunks', access: api('files:upload', 'files.upload'), errors: 'Error', finalizesUpload: true },
  { method: 'GET', path: '/api/files/chunks/:uploadId/part/:partNumber', access: api('files:upload', 'files.upload'), errors: 'Error' },
  { method: 'PUT', path: '/api/files/chunks/:uploadId/part/:partNumber', access: api('files:upload', 'files.upload'), errors: 'Error' },
  { method: 'POST', path: '/api/files/chunks/:uploadId/complete', access: api('files:upload', 'files.upload'), errors: 'Error', finalizesUpload: true },
  // Not in the specification: a client that gives up an upload frees its quota at once (docs/decisions.md).
  { method: 'DELETE', path: '/api/files/chunks/:uploadId', access: api('files:upload', 'files.upload'), errors: 'Error' },
  { method: 'GET', path: '/api/urls', access: api('urls:read', 'links.read'), errors: 'ApiError' },
  { method: 'POST', path: '/api/urls', access: api('urls:write', 'links.create'), errors: 'ApiError', malformedJson: 'server-error' },
  { method: 'DELETE', path: '/api/urls/:id', access: api('urls:write', 'links.delete'), errors: 'ApiError' },

  // Organisation and account settings (contract §3), browser session only, except the tag listing
  // for uploaders, which the legacy credential may read too.
  { method: 'GET', path: '/api/upload-profiles', access: session('uploadProfiles.manage'), errors: 'ApiError' },
  { method: 'POST', path: '/api/upload-profiles', access: session('uploadProfiles.manage'), errors: 'ApiError' },
  { method: 'PATCH', path: '/api/upload-profiles/:id', access: session('uploadProfiles.manage'), errors: 'ApiError' },
  { method: 'DELETE', path: '/api/upload-profiles/:id', access: session('uploadProfiles.manage'), errors: 'ApiError' },
  { method: 'GET', path: '/api/folders', access: session('folders.manage'), errors: 'ApiError' },
  { method: 'POST', path: '/api/folders', access: session('folders.manage'), errors: 'ApiError' },
  { method: 'PATCH', path: '/api/folders/:id', access: session('folders.manage'), errors: 'ApiError' },
  { method: 'DELETE', path: '/api/folders/:id', access: session('folders.manage'), errors: 'ApiError' },
  { method: 'GET', path: '/api/folder-shares', access: session('folders.manage'), errors: 'ApiError' },
  { method: 'GET', path: '/api/folders/:id/share', access: session('folders.manage'), errors: 'ApiError' },
  // Sharing makes the folder's public files one public list: the owner must be allowed to share.
  { method: 'PUT', path: '/api/folders/:id/share', access: session('folders.manage', 'files.share'), errors: 'ApiError' },
  { method: 'DELETE', path: '/api/folders/:id/share', access: session('folders.manage'), errors: 'ApiError' },
  { method: 'GET', path: '/api/tags', access: session('tags.manage'), errors: 'ApiError' },
  { method: 'POST', path: '/api/tags', access: session('tags.manage'), errors: 'ApiError' },
  { method: 'PATCH', path: '/api/tags/:id', access: session('tags.manage'), errors: 'ApiError' },
  { method: 'DELETE', path: '/api/tags/:id', access: session('tags.manage'), errors: 'ApiError' },
  { method: 'GET', path: '/api/files/tags', access: { kind: 'sessionOrLegacy', permission: 'files.read' }, errors: 'ApiError' },
  { method: 'GET', path: '/api/account', access: session(), errors: 'ApiError' },
  // profile.update guards the name, upload defaults and default profile, which the account settings
  // check field by field: a password change needs no permission (docs/decisions.md).
  { method: 'PATCH', path: '/api/account', access: session(), errors: 'ApiError' },
  // Leaving the instance: the account's own decision, with its password (docs/decisions.md).
  { method: 'DELETE', path: '/api/account', access: session(), errors: 'ApiError' },
  // Notices of the account's own (docs/decisions.md, "Taking down content"): every account reads its own.
  { method: 'GET', path: '/api/account/notices', access: session(), errors: 'ApiError' },
  { method: 'DELETE', path: '/api/account/notices/:id', access: session(), errors: 'ApiError' },

  // Files (contract §3 "Files", §6).
  { method: 'PATCH', path: '/api/files/:id', access: session('files.update'), errors: 'ApiError' },
  { method: 'DELETE', path: '/api/files/:id', access: session('files.delete'), errors: 'ApiError' },
  // A bearer credential on a file that is not public: the generic 401, from the route (contract §10).
  // Its errors are §3's (`ApiError`), as are those of the preview beside it; the path is the raw
  // route's shape (contract §10), whose errors are `Error`.
  { method: 'GET', path: '/api/files/:id/download', access: publicWithSession, errors: 'ApiError' },
  // The web app's previews of the owner's own files (docs/decisions.md, "Owner previews").
  { method: 'GET', path: '/api/files/:id/preview', access: publicWithSession, errors: 'ApiError' },
  // Thumbnails and recognised text (contract §10): public thumbnails to anyone, the rest to the
  // owner's browser session; a bearer credential on a file that is not public gets the generic 401.
  // Checked in the route, which shares its shape with the raw route `/api/files/<urlId>/<name>`.
  { method: 'GET', path: '/api/files/:id/thumbnail', access: publicWithSession, errors: 'Error' },
  { method: 'GET', path: '/api/files/:id/ocr', access: publicWithSession, errors: 'ApiError' },
  { method: 'POST', path: '/api/files/:id/unlock', access: browserRoute, errors: 'ApiError' },
  { method: 'GET', path: '/api/files/:urlId/:name', access: publicWithSession, errors: 'Error' },
  { method: 'GET', path: '/:urlId/:name', access: publicWithSession, errors: 'Error' },

  // Public short-link redirect (contract §6); it answers HTML, so the error shape only covers a 500.
  { method: 'GET', path: '/u/:shortCode', access: publicRoute, errors: 'Error' },
  { method: 'GET', path: '/folder/:shareId', access: publicRoute, errors: 'Error' },
  { method: 'GET', path: '/folder/:shareId/zip', access: publicRoute, errors: 'Error' },

  // The web app (docs/web.md): its pages and its content-hashed assets.
  { method: 'GET', path: '/', access: publicRoute, errors: 'Error' },
  { method: 'GET', path: '/app', access: publicRoute, errors: 'Error' },
  { method: 'GET', path: '/app/*', access: publicRoute, errors: 'Error' },
  { method: 'GET', path: '/assets/*', access: publicRoute, errors: 'Error' },
  { method: 'GET', path: '/favicon.ico', access: publicRoute, errors: 'Error' },
];

/** The permissions a route's caller needs, every one of them (none for public routes). */
export function permissionsOf(access: Access): readonly Permission[] {
  if (!('permission' in access) || access.permission === undefined) return [];
  return typeof access.permission === 'string' ? [access.permission] : access.permission;
}

const byRoute = new Map(routePolicies.map((p) => [`${p.method} ${p.path}`, p]));

/** HEAD is answered by the GET route and shares its policy. */
export function policyFor(method: string, path: string): RoutePolicy | undefined {
  return byRoute.get(`${method === 'HEAD' ? 'GET' : method} ${path}`);
}
