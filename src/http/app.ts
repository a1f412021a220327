import Fastify, { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import cookie from '@fastify/cookie';
import swagger from '@fastify/swagger';
import { validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { AppContext } from '../context.ts';
import { authenticate, checkAccess } from '../auth/authorize.ts';
import { permissionsOf, policyFor } from '../auth/route-policy.ts';
import { AppError, unauthorized } from '../errors.ts';
import { SESSION_COOKIE } from '../auth/sessions.ts';
import { clearSessionCookie, setSessionCookie } from './sign-in.ts';
import type { App, RouteModule } from './route-module.ts';
import { errorBody, errorShapeOf, handleError, nullBodyProblem, sendError } from './error-responses.ts';
import { MAX_JSON_DEPTH, nestsDeeperThan } from './json-depth.ts';
import { answerProblem, errorResponses, missingResponses, openApiComponents, openApiTransform, serializerCompiler } from './responses.ts';
import { methodsForUrl } from './route-match.ts';
import { nulProblem } from './nul-text.ts';
import { unexpectedBodyProblem } from './unexpected-body.ts';
import { contentCodingProblem } from './content-coding.ts';
import { answeredAlready, boundClients, clientHungUp, clientBoundOptions, MAX_PARAM_LENGTH, headerProblem, overCapMessage, overConnectionCap } from './client-bounds.ts';
import { UploadStartLimit, UPLOAD_START_RETRY_AFTER_SECONDS } from '../uploads/upload-start-limit.ts';
import { fileUploadRoutes } from './routes/file-upload.ts';
import { chunkUploadRoutes } from './routes/chunk-upload.ts';
import { fileServingRoutes } from './routes/file-serving.ts';
import { sharePageRoutes } from './routes/share-page.ts';
import { unlockRoutes } from './routes/unlock.ts';
import { fileManagementRoutes } from './routes/file-management.ts';
import { renderNotFoundPage, sharePagePolicy } from '../files/share-page.ts';
import { sharePageHeaders } from './share-page-headers.ts';
import { healthRoutes } from './routes/health.ts';
import { sessionRoutes } from './routes/sessions.ts';
import { archiveRoutes } from './routes/archives.ts';
import { shareArchiveRoutes } from './routes/share-archives.ts';
import { applyArchiveBodyRules } from './archive-body.ts';
import { bodyReadWhole, bodyWithDeadline, wholeBodyDeadlineMs, wholeBodyLate } from './body-deadline.ts';
import { twoFactorRoutes } from './routes/two-factor.ts';
import { authRoutes } from './routes/auth.ts';
import { passkeyRoutes } from './routes/passkeys.ts';
import { userRoutes } from './routes/users.ts';
import { roleRoutes } from './routes/roles.ts';
import { settingsRoutes } from './routes/settings.ts';
import { inviteRoutes } from './routes/invites.ts';
import { moderationRoutes } from './routes/moderation.ts';
import { tokenRoutes } from './routes/tokens.ts';
import { legacyCredentialRoutes } from './routes/legacy-credential.ts';
import { webhookRoutes } from './routes/webhooks.ts';
import { urlRoutes } from './routes/urls.ts';
import { shortLinkRedirectRoutes } from './routes/short-link-redirect.ts';
import { uploadProfileRoutes } from './routes/upload-profiles.ts';
import { folderRoutes } from './routes/folders.ts';
import { folderSharePageRoutes } from './routes/folder-share-page.ts';
import { tagRoutes } from './routes/tags.ts';
import { accountRoutes } from './routes/account.ts';
import { fileListingRoutes } from './routes/file-listing.ts';
import { setupRoutes } from './routes/setup.ts';
import { auditRoutes } from './routes/audit.ts';
import { webAppRoutes } from './routes/web-app.ts';
import { apiDocsRoutes } from './routes/api-docs.ts';
import { clientKey } from '../shared/client-key.ts';

export type { App } from './route-module.ts';

const routeModules: RouteModule[] = [healthRoutes, authRoutes, passkeyRoutes, sessionRoutes, twoFactorRoutes, archiveRoutes, shareArchiveRoutes, userRoutes, roleRoutes, settingsRoutes, inviteRoutes, moderationRoutes, tokenRoutes, legacyCredentialRoutes, urlRoutes, shortLinkRedirectRoutes, fileUploadRoutes, uploadProfileRoutes, folderRoutes, folderSharePageRoutes, tagRoutes, accountRoutes, webhookRoutes, fileServingRoutes, unlockRoutes, fileManagementRoutes, sharePageRoutes, chunkUploadRoutes, fileListingRoutes, auditRoutes, setupRoutes, apiDocsRoutes, webAppRoutes];

/** One access-log line per request, when it completes, instead of Fastify's two (received, completed). */
class AccessLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error) reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
    else reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}

export async function buildApp(ctx: AppContext): Promise<App> {
  const app = Fastify({
    loggerInstance: ctx.log,
    logController: new AccessLog(),
    // One hop: the address comes from the last X-Forwarded-For entry, the one the proxy in front
    // added. The entries before it are whatever the client sent, and would let it pick its own
    // address past every per-address limit (docs/decisions.md, "Behind a proxy").
    trustProxy: ctx.config.trustProxy ? (_address: string, hop: number) => hop === 0 : false,
    bodyLimit: 1024 * 1024,
    // Routes are matched case-sensitively and without a trailing-slash alias, like the contract writes them.
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: MAX_PARAM_LENGTH },
    ...clientBoundOptions(ctx.config),
  }).withTypeProvider<ZodTypeProvider>();
  boundClients(app.server, ctx.config, app.log);

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.decorateRequest('principal', null);

  // An empty JSON body (as some clients send on POST without data) means "no body", not an error.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, undefined);
    if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
      return done(Object.assign(new Error(`The request body nests JSON deeper than ${MAX_JSON_DEPTH} levels`), { statusCode: 400 }), undefined);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Marked like Fastify's own parser error, so only a body that fails to parse is answered as such.
      return done(Object.assign(new Error('The request body is not valid JSON'), { code: 'FST_ERR_CTP_INVALID_JSON_BODY', statusCode: 400 }), undefined);
    }
    const nullProblem = parsed === null ? nullBodyProblem(request) : null;
    if (nullProblem !== null) return done(Object.assign(new Error(nullProblem), { statusCode: 400 }), undefined);
    done(null, parsed);
  });

  await app.register(cookie);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Hoard', version: '1.0.0', description: 'Self-hosted file host: uploads, share links, short URLs and scoped API tokens.' },
      servers: [{ url: ctx.config.baseUrl }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'A named API token (`svc_…`); its scopes are listed on each operation (spec, Authentication 3).' },
          legacy: { type: 'http', scheme: 'bearer', description: "The account's legacy upload credential (contract §3): every route a named token reaches, without a scope allowlist, and the tag listing." },
          session: { type: 'apiKey', in: 'cookie', name: SESSION_COOKIE, description: 'A browser session (POST /api/auth/login). State-changing requests must carry the Origin of BASE_URL.' },
        },
      },
    },
    transform: openApiTransform(policyFor),
    transformObject: openApiComponents,
  });

  // Every route gets its policy row when it is registered, so a request reads it from its route's
  // config instead of looking it up again. HEAD routes (GET's, added by Fastify) share GET's row.
  app.addHook('onRoute', (route) => {
    if (Array.isArray(route.method)) throw new Error(`Route ${route.url}: register one method per route, so that it has one policy row`);
    if (route.method === 'OPTIONS') return;
    const policy = policyFor(route.method, route.url);
    if (!policy) throw new Error(`Route ${route.method} ${route.url} has no row in the route policy table`);
    route.config = { ...route.config, policy };
    // Archive routes read a body with a 16 KiB limit and a 5-second deadline (contract §9), set here
    // from the row so that a new archive route cannot go without them.
    if (policy.archive) applyArchiveBodyRules(route);
    // Every answer has a schema (docs/architecture.md, "One definition of the API"); the error
    // bodies are the policy row's, added here so that no route writes them.
    const response = (route.schema?.response ?? {}) as Record<string, unknown>;
    route.schema = { ...route.schema, response: { ...errorResponses(policy), ...response } };
    if (ctx.config.checkResponses) registered.push(route as (typeof registered)[number]);
  });
  // Checked once every route is in place, so that a module's own onRoute hook (which runs after the
  // root's) may still declare the answers of routes a plugin registers for it.
  const registered: Array<{ method: string; url: string; schema?: { response?: unknown } }> = [];
  app.addHook('onReady', async () => {
    for (const route of registered) {
      const missing = missingResponses(route);
      if (missing) throw new Error(missing);
    }
  });

  // The single authorization point: every request's route policy, read once, decides the rest.
  const uploadStarts = new UploadStartLimit(ctx.config.uploadRateLimit);
  const expectedOrigin = new URL(ctx.config.baseUrl).origin;
  // One hook for every request (each hook is a step on every request's path).
  app.addHook('onRequest', async (request, reply) => {
    // Background media work gives way while requests keep coming (src/shared/request-load.ts).
    ctx.load.note();
    // Before anything else: a request without Host (which Node would refuse with an empty 400) or
    // with bad headers, and one on a connection over the per-address cap (answered, then closed).
    const badHeader = headerProblem(request);
    if (badHeader !== null) {
      // A body not read leaves the connection unusable.
      if (badHeader.close) reply.header('connection', 'close');
      return sendError(request, reply, badHeader.status, badHeader.message);
    }
    if (overConnectionCap(request)) {
      // As every other 429 says when to come back: a few seconds, for some of the address's own
      // connections to end.
      reply.header('connection', 'close').header('Retry-After', '5');
      return sendError(request, reply, 429, overCapMessage(ctx.config));
    }
    // None for a request that reached no route (answered by the not-found handler).
    const { policy } = request.routeOptions.config;
    if (!policy) return;
    // Upload-start rate limit, counted before authentication (spec, Limits): 429 with Retry-After.
    if (policy.uploadStart && !uploadStarts.allow(clientKey(request.ip))) {
      reply.header('Retry-After', String(UPLOAD_START_RETRY_AFTER_SECONDS));
      return sendError(request, reply, 429, 'Too many requests');
    }
    // Archive routes refuse any Authorization header, whatever else the request carries (contract §9).
    if (policy.archive && request.headers.authorization !== undefined) throw unauthorized();
    const sessionCookie = request.cookies[SESSION_COOKIE];
    const principal = await authenticate(ctx.db, policy, { authorization: request.headers.authorization, sessionCookie }).catch((error: unknown) => {
      // Without a bearer credential, a 401 to a request with a session cookie means the cookie's
      // session has ended (signed out elsewhere, expired): the browser need not keep sending it.
      if (sessionCookie && request.headers.authorization === undefined && error instanceof AppError && error.kind === 'unauthorized') clearSessionCookie(ctx, reply);
      throw error;
    });
    // The session's expiry slid: the browser's cookie slides with it (a sign-out later in this
    // request clears it all the same).
    if (principal?.sessionRenewedUntil !== undefined && sessionCookie) setSessionCookie(ctx, reply, sessionCookie, principal.sessionRenewedUntil);
    // An answer for someone signed in (or a token) is theirs alone: kept out of shared caches unless
    // its route says otherwise (a public file's bytes, say, set their own).
    if (principal) reply.header('Cache-Control', 'private, no-store');
    // Set before the permission check so that a refused token request is audited too.
    request.principal = principal;
    checkAccess(policy, principal, { method: request.method, origin: request.headers.origin }, expectedOrigin);
  });

  // A body in a content coding is refused before it is read (src/http/content-coding.ts); a request
  // that reached no route gets its 404 or 405 whatever it sends.
  // A body read whole into memory (JSON, a form) must be complete within twice the idle time of the
  // start of the request (src/http/body-deadline.ts); archive routes have their own 5 seconds.
  const wholeBodyMs = wholeBodyDeadlineMs(ctx.config.requestIdleTimeoutMs);
  app.addHook('preParsing', async (request, reply, payload) => {
    const { policy } = request.routeOptions.config;
    if (!policy) return payload;
    const problem = contentCodingProblem(request.headers);
    if (problem !== null) {
      // What it takes instead (RFC 9110 §12.5.3), and a 400 rather than RFC 9110's 415: an invalid
      // body, as the specification's status lists have it (none of its routes lists a 415).
      reply.header('Accept-Encoding', 'identity');
      throw Object.assign(new Error(problem), { statusCode: 400 });
    }
    if (policy.archive || !bodyReadWhole(request)) return payload;
    return bodyWithDeadline(reply, payload, wholeBodyMs, () => wholeBodyLate(wholeBodyMs));
  });

  // Text with a NUL character is a client mistake on every route (src/http/nul-text.ts), and so is a
  // body sent to a route that takes none (src/http/unexpected-body.ts).
  app.addHook('preValidation', (request, reply, done) => {
    const problem = nulProblem(request) ?? unexpectedBodyProblem(request);
    if (problem === null) return done();
    void sendError(request, reply, 400, problem);
  });

  if (ctx.config.checkResponses) {
    // Tests only: an answer that breaks its route's response schema becomes a 500 that says why.
    app.addHook('onSend', async (request, reply, payload) => {
      const response = request.routeOptions.schema?.response as Parameters<typeof answerProblem>[0];
      const problem = answerProblem(response, reply.statusCode, reply.getHeader('content-type') as string | undefined, payload, errorShapeOf(request));
      if (!problem) return payload;
      const message = `Response check: ${request.method} ${request.routeOptions.url ?? request.url} answered ${reply.statusCode} against its schema: ${problem}`;
      request.log.error(message);
      reply.code(500);
      return JSON.stringify(errorBody(errorShapeOf(request), message));
    });
  }

  app.addHook('onResponse', async (request, reply) => {
    const principal = request.principal;
    if (!principal || principal.via === 'session') return;
    // A principal is only ever set on a routed request, whose config has its policy row.
    const { policy } = request.routeOptions.config;
    const url = request.routeOptions.url ?? request.url;
    ctx.audit.record({
      userId: principal.user.id,
      tokenId: principal.token?.id ?? null,
      credential: principal.via,
      operation: (policy && permissionsOf(policy.access).join('+')) || `${request.method} ${url}`,
      route: `${request.method} ${url}`,
      status: reply.statusCode,
      ip: request.ip,
    });
  });

  // A body that stopped arriving (408) or was badly framed (400) was answered on its connection,
  // now closed; whatever the interrupted route then throws is that same client mistake, not a
  // server error.
  app.setErrorHandler((error: Error, request, reply) => {
    const answered = answeredAlready(request);
    if (answered) return sendError(request, reply, answered.status, answered.message);
    // A path with no route (or a method it does not have) is that, whatever its body: a body the
    // parser refused is no reason to answer 400 for it.
    if (request.is404) return answerNoRoute(request, reply);
    // A client that hung up before its body was read: a client mistake, answered (to nobody) as one,
    // not a server error. What it had sent is cleaned up where it was being stored.
    if (clientHungUp(request, error)) return sendError(request, reply, 400, 'The client closed the connection before its request was read');
    return handleError(error, request, reply);
  });
  const notFoundPolicy = sharePagePolicy(ctx.config.baseUrl);
  app.setNotFoundHandler((request, reply) => answerNoRoute(request, reply));
  function answerNoRoute(request: FastifyRequest, reply: FastifyReply) {
    const path = request.url.split('?')[0]!;
    // A path the route table has, asked with a method it does not have: 405 and the methods it has
    // (HEAD goes with GET and is not listed); OPTIONS is answered with them.
    const allowed = methodsForUrl(path);
    const method = request.method === 'HEAD' ? 'GET' : request.method;
    if (allowed.length > 0 && !allowed.includes(method)) {
      reply.header('allow', allowed.join(', '));
      if (request.method === 'OPTIONS') return reply.code(204).send();
      return sendError(request, reply, 405, `${request.method} is not allowed here; use ${allowed.join(', ')}`);
    }
    // A script's base URL written with a slash at its end asks for `//api/files`, and one with a slash
    // added `/api/files/`: the route is not taken under another path (the contract's are exact), but
    // the answer names the one meant, in JSON a script can read.
    const meant = path.replace(/\/{2,}/g, '/').replace(/(.)\/$/, '$1');
    const known = meant !== path && meant.startsWith('/api/') && methodsForUrl(meant).includes(method);
    if (path.startsWith('/api/') || known) {
      return sendError(request, reply, 404, `No route ${request.method} ${path}${known ? `: the route is ${request.method} ${meant} (check for a slash too many in the address, as a base URL ending in "/" gives)` : ''}`);
    }
    // Under the share page's headers, as its own 404 is: no framing, no sniffing, nothing but its style.
    sharePageHeaders(reply, notFoundPolicy);
    return reply.code(404).send(renderNotFoundPage());
  }

  // Each module in its own encapsulated scope (route-module.ts), after the root's parsers, hooks and
  // handlers, which every scope inherits.
  for (const routes of routeModules) await app.register(routes, { ctx });
  return app;
}
