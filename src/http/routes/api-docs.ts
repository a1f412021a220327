import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import scalarApiReference from '@scalar/fastify-api-reference';
import type { RouteModule } from '../route-module.ts';
import { bytes, html, noBody, redirect } from '../responses.ts';

/** Where the API reference lives; `/api/docs` redirects to the page at `/api/docs/`. */
export const API_DOCS_PREFIX = '/api/docs';
const PAGE = `${API_DOCS_PREFIX}/`;
/** The plugin's script bundle (about 4.9 MB), the same text for the life of the process. */
const BUNDLE = `${API_DOCS_PREFIX}/js/scalar.js`;

/**
 * The bundle's ETag and gzip form, made on first use (not at start: most processes never serve it).
 * A slow link then fetches about a fifth of it once, and a revalidation is a 304.
 */
let bundleForms: Promise<{ etag: string; gzipped: Buffer }> | undefined;
const formsOf = (text: string) =>
  (bundleForms ??= promisify(gzip)(text).then((gzipped) => ({ etag: `"${createHash('sha256').update(text).digest('base64url').slice(0, 27)}"`, gzipped })));

const hashSource = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/** The inline scripts of a page (those without `src`), as CSP hash sources. */
function inlineScriptHashes(html: string): string[] {
  return [...html.matchAll(/<script\b(?![^>]*\ssrc=)[^>]*>([\s\S]*?)<\/script>/gi)].map((match) => hashSource(match[1]!));
}

/**
 * The reference page's Content-Security-Policy. Everything it loads comes from this server: the
 * bundled script (`/api/docs/js/scalar.js`), the one inline script that starts it (allowed by its
 * hash) and the OpenAPI document; its requests ("Test request") go to this server's API. Styles
 * need 'unsafe-inline': the bundle injects its stylesheet and theme at run time. No fonts are
 * loaded (`withDefaultFonts: false`: the default ones come from the vendor's font host).
 */
function apiDocsPolicy(scriptHashes: string[]): string {
  return [
    "default-src 'none'",
    `script-src 'self' ${scriptHashes.join(' ')}`.trim(),
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "form-action 'self'",
    "base-uri 'none'",
    "object-src 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * The API reference (Scalar), rendered in the browser from the document `/api/openapi.json` serves.
 * The plugin serves its script bundle itself, so the page works without network access. Its routes
 * are hidden from the OpenAPI document and each has a public row in the route policy table.
 */
export const apiDocsRoutes: RouteModule = async (app) => {
  // This module's scope only: the page's headers.
  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('X-Content-Type-Options', 'nosniff');
    if (request.routeOptions.url === PAGE && typeof payload === 'string') {
      reply
        .header('Content-Security-Policy', apiDocsPolicy(inlineScriptHashes(payload)))
        .header('X-Frame-Options', 'DENY')
        .header('Referrer-Policy', 'same-origin')
        .header('Cache-Control', 'no-cache');
    }
    if (request.routeOptions.url === BUNDLE && typeof payload === 'string' && reply.statusCode === 200) {
      const { etag, gzipped } = await formsOf(payload);
      reply.header('ETag', etag).header('Cache-Control', 'no-cache').header('Vary', 'Accept-Encoding');
      if (request.headers['if-none-match'] === etag) {
        reply.code(304);
        return '';
      }
      if (/\bgzip\b/.test(request.headers['accept-encoding'] ?? '')) {
        reply.header('Content-Encoding', 'gzip');
        return gzipped;
      }
    }
    return payload;
  });
  // The plugin declares its routes with `{ hide: true }` alone, and every route must declare its
  // answers (docs/architecture.md, "One definition of the API"): this module's onRoute hook, which
  // sees the routes the plugin registers in this scope, adds them.
  const answers: Record<string, Record<number, unknown>> = {
    [API_DOCS_PREFIX]: { 301: redirect(`To the page, ${PAGE}`) },
    [PAGE]: { 200: html('The API reference page') },
    [BUNDLE]: { 200: bytes("The page's script", 'application/javascript'), 304: noBody('Not modified: the bundle still has the ETag asked about') },
  };
  app.addHook('onRoute', (options) => {
    const own = answers[options.url];
    if (own) options.schema = { ...options.schema, response: { ...(options.schema?.response as object | undefined), ...own } };
  });
  await app.register(scalarApiReference, {
    routePrefix: API_DOCS_PREFIX,
    configuration: {
      url: '/api/openapi.json',
      pageTitle: 'Hoard API reference',
      withDefaultFonts: false,
      // Nothing that calls the vendor's services: its developer toolbar (shown on localhost), the
      // AI agent, the MCP offer and telemetry. The CSP would block them; they should not show.
      showDeveloperTools: 'never',
      agent: { disabled: true },
      mcp: { disabled: true },
      telemetry: false,
    },
  });
};
