import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyReply } from 'fastify';
import type { RouteModule } from '../route-module.ts';
import type { Config } from '../../config.ts';
import { bytes, html, noBody } from '../responses.ts';
import { faviconIco } from '../favicon.ts';

/** Where `vite build` (web/vite.config.ts) writes the single-page app. */
export const webDistDir = fileURLToPath(new URL('../../../web/dist/', import.meta.url));

const ONE_YEAR_MS = 365 * 24 * 3600 * 1000;

/**
 * The Content-Security-Policy of the app's HTML: only its own scripts and styles, no framing. Parts
 * of a chunked upload to S3 are PUT straight to presigned URLs, so the bucket's origin may be
 * connected to as well.
 */
export function appContentSecurityPolicy(config: Pick<Config, 'storage' | 's3'>): string {
  const connect = ["'self'"];
  if (config.storage === 's3' && config.s3) {
    connect.push(config.s3.endpoint ? new URL(config.s3.endpoint).origin : 'https://*.amazonaws.com');
  }
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "media-src 'self' blob:",
    `connect-src ${connect.join(' ')}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

const notBuiltPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Hoard</title></head>
<body><h1>The web interface has not been built</h1>
<p>Run <code>npm start</code> (which builds it when it is missing) or <code>npm run build:web</code>, then reload.
The HTTP API under <code>/api</code> works without it.</p></body></html>`;

/**
 * The web app (docs/web.md), served by the same process:
 * - `/`, `/app` and `/app/*`: the app's index.html (the app routes on the client);
 * - `/assets/*`: Vite's content-hashed files, cached for a year.
 * None of these can be taken for a share page (`/<urlId>/<name>`): a urlId is eight characters, and
 * find-my-way prefers the static segments `app` and `assets` to the `:urlId` parameter anyway.
 */
export const webAppRoutes: RouteModule = async (app, { ctx }) => {
  const csp = appContentSecurityPolicy(ctx.config);
  // serve:false: only reply.sendFile(), for the routes below (each has a route-policy row).
  // preCompressed: the build writes a .br and a .gz beside every asset (web/vite.config.ts); the one
  // the browser accepts is sent, with `Vary: Accept-Encoding`.
  await app.register(fastifyStatic, { root: webDistDir, serve: false, suppressWarning: true, preCompressed: true });

  const sendIndex = async (reply: FastifyReply) => {
    reply
      .header('X-Content-Type-Options', 'nosniff')
      .header('X-Frame-Options', 'DENY')
      .header('Referrer-Policy', 'same-origin')
      .header('Cache-Control', 'no-cache');
    let html: string;
    try {
      // Read on every request (it is small), so a rebuild is picked up without a restart.
      html = await fs.promises.readFile(`${webDistDir}index.html`, 'utf8');
    } catch {
      return reply.code(503).type('text/html; charset=utf-8').send(notBuiltPage);
    }
    return reply.header('Content-Security-Policy', csp).type('text/html; charset=utf-8').send(html);
  };

  // Pages of the app, not part of the HTTP API: left out of the OpenAPI description.
  const page = { schema: { hide: true, response: { 200: html("The app's index.html"), 503: html('The web interface has not been built') } } };
  app.get('/', page, (_request, reply) => sendIndex(reply));
  app.get('/app', page, (_request, reply) => sendIndex(reply));
  app.get('/app/*', page, (_request, reply) => sendIndex(reply));
  const asset = { schema: { hide: true, response: { 200: bytes('A file of the built app'), 206: bytes('The part of it a Range asked for'), 304: noBody('Not modified') } } };
  app.get('/assets/*', asset, (request, reply) => {
    const file = (request.params as { '*': string })['*'];
    // Only plain names below assets/: no dot segments, hidden files or empty segments.
    if (file.split('/').some((segment) => segment === '' || segment.startsWith('.'))) return reply.callNotFound();
    reply.header('X-Content-Type-Options', 'nosniff');
    // Names carry a content hash: a changed file is a new URL.
    return reply.sendFile(`assets/${file}`, webDistDir, { immutable: true, maxAge: ONE_YEAR_MS, dotfiles: 'deny', index: false });
  });
  const icon = faviconIco();
  app.get('/favicon.ico', { schema: { hide: true, response: { 200: bytes("Hoard's icon") } } }, (_request, reply) =>
    reply.header('Cache-Control', 'public, max-age=604800').header('X-Content-Type-Options', 'nosniff').type('image/x-icon').send(icon),
  );
};
