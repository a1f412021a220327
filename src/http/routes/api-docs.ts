import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { Readable } from 'node:stream';
import { gzip } from 'node:zlib';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import type { FastifyApiReferenceOptions } from '@scalar/fastify-api-reference';
import type { RouteModule } from '../route-module.ts';
import { bytes, html, noBody, redirect } from '../responses.ts';
import { notModified } from '../conditional-requests.ts';

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

/** The plugin's options: the page renders the document `/api/openapi.json` serves. */
const referenceOptions: FastifyApiReferenceOptions = {
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
};

type Handler = (request: FastifyRequest, reply: FastifyReply) => unknown;

/**
 * The plugin's own handlers, by URL, loaded on first use: its module holds the page's script as one
 * 4.9 MB string and, loaded at start, held about 20 MiB of the server's resident memory for a page
 * most processes never serve. The plugin is registered on a Fastify instance of its own, never
 * started, which only collects the handlers; the routes are this module's, declared at start.
 */
let pluginHandlers: Promise<Map<string, Handler>> | undefined;
function loadPluginHandlers(): Promise<Map<string, Handler>> {
  return (pluginHandlers ??= (async () => {
    const { default: scalarApiReference } = await import('@scalar/fastify-api-reference');
    // Same router options as the app's, on which the plugin decides whether to add the redirect.
    const collector = Fastify({ routerOptions: { ignoreTrailingSlash: false } });
    const handlers = new Map<string, Handler>();
    collector.addHook('onRoute', (route) => {
      if (route.method === 'GET') handlers.set(route.url, route.handler.bind(collector) as Handler);
    });
    await collector.register(scalarApiReference, referenceOptions);
    return handlers;
  })());
}

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
 * are in the OpenAPI document, as every `/api` route is, and each has a public row in the route
 * policy table.
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
      if (notModified(request, etag)) {
        reply.code(304);
        // No body and no length (RFC 9110 §8.6), for HEAD as for GET: an empty string would be sent
        // with `Content-Length: 0`.
        return Readable.from([]);
      }
      if (/\bgzip\b/.test(request.headers['accept-encoding'] ?? '')) {
        reply.header('Content-Encoding', 'gzip');
        return gzipped;
      }
    }
    return payload;
  });
  // The plugin's routes, declared here so that its module loads only when one is asked for; each
  // declares its answers (docs/architecture.md, "One definition of the API").
  const routes: Record<string, { operationId: string; summary: string; response: Record<number, unknown> }> = {
    [API_DOCS_PREFIX]: { operationId: 'redirectToApiReference', summary: 'Redirects to the API reference page', response: { 301: redirect(`To the page, ${PAGE}`) } },
    [PAGE]: { operationId: 'getApiReference', summary: 'The API reference, a page rendered from this document', response: { 200: html('The API reference page') } },
    [BUNDLE]: {
      operationId: 'getApiReferenceScript',
      summary: "The API reference page's script",
      response: { 200: bytes("The page's script", 'application/javascript'), 304: noBody('Not modified: the bundle still has the ETag asked about') },
    },
  };
  for (const [url, { operationId, summary, response }] of Object.entries(routes)) {
    app.get(url, { schema: { tags: ['meta'], operationId, summary, response } }, async (request, reply) => {
      const handler = (await loadPluginHandlers()).get(url);
      if (!handler) throw new Error(`The API reference plugin has no route GET ${url}`);
      return handler(request, reply);
    });
  }
};
