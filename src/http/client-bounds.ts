import type { IncomingMessage, Server, ServerOptions, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger, FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import { loggedUrl } from './logged-url.ts';
import { clientKey } from '../shared/client-key.ts';
import { errorBody, errorShapeOf, handleError, rawErrorResponse, sendError } from './error-responses.ts';

/**
 * How long a client may hold a connection (contract §7: "one client cannot hold the server";
 * docs/decisions.md, "Client bounds"):
 * - headers must be complete within the idle time (Node's headersTimeout), else 408;
 * - a request body that sends no byte for the idle time gets a 408, and the connection is closed;
 *   there is no deadline on a whole request, so an upload whose bytes keep flowing is never cut;
 * - an idle keep-alive connection is closed after KEEP_ALIVE_TIMEOUT_MS;
 * - open connections are capped per client address and for the whole server.
 * Errors Node answers by itself (malformed request, headers too large, header deadline) are
 * answered here in the route's error shape, never echoing the URL.
 */

/** Longer than the 60 s idle time of common reverse proxies' upstream connections, so the proxy closes first and never sends a request onto a connection being closed. */
const KEEP_ALIVE_TIMEOUT_MS = 72_000;
/**
 * Then the connection is closed after its answer and the client opens a new one: one connection's
 * life stays bounded without disturbing keep-alive clients. At 1,000 the benchmark's keep-alive
 * listing fell from 7,090 to 3,194 req/s (docs/decisions.md, "Client bounds").
 */
const MAX_REQUESTS_PER_SOCKET = 10_000;
/** Node's limit on the request line and headers together (its default). */
const MAX_HEADER_BYTES = 16 * 1024;
/** When the headers overflow, a request line this long is what is too large (414, else 431). */
const LONG_REQUEST_LINE = MAX_HEADER_BYTES / 2;
/** A connection over the per-address cap gets this long to send the request its 429 answers. */
const OVER_CAP_GRACE_MS = 1000;
/** The router's limit on one path parameter. */
export const MAX_PARAM_LENGTH = 1024;

export const seconds = (ms: number) => `${Math.round(ms / 100) / 10} seconds`;

/** The Fastify options that bound clients. */
export function clientBoundOptions(config: Config) {
  const idle = config.requestIdleTimeoutMs;
  const http: ServerOptions = {
    headersTimeout: idle,
    // As below; here too, as Node checks headersTimeout against it when it makes the server, before
    // Fastify sets it: with Node's default (300 s) an idle time over 5 minutes stopped start-up.
    requestTimeout: 0,
    maxHeaderSize: MAX_HEADER_BYTES,
    // How often Node looks for connections past the headers deadline (its default, 30 s, would double it).
    connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(idle / 4))),
    // Node would answer a request without Host with an empty 400 of its own; headerProblem() below answers it instead.
    requireHostHeader: false,
  };
  return {
    // Socket inactivity; what an idle connection gets is decided by the 'timeout' listener below.
    connectionTimeout: idle,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    // No deadline on a whole request (a long upload is never cut); idleness is bounded instead.
    requestTimeout: 0,
    maxRequestsPerSocket: MAX_REQUESTS_PER_SOCKET,
    http,
    clientErrorHandler: (error: Error, socket: Socket) => answerClientError(error as Error & { code?: string; rawPacket?: Buffer }, socket, idle),
    frameworkErrors: answerFrameworkError,
  };
}

/** The request each connection is answering, if any. */
const inFlight = new WeakMap<Socket, { req: IncomingMessage; res: ServerResponse }>();

/**
 * Requests already answered on their connection, which is closed: a body that stopped arriving
 * (408) or was badly framed (400). Whatever the interrupted route then throws is that answer.
 */
const answeredOnConnection = new WeakMap<IncomingMessage, { status: number; message: string }>();

export function answeredAlready(request: FastifyRequest): { status: number; message: string } | undefined {
  return answeredOnConnection.get(request.raw);
}

/**
 * Whether `error` is the client's closing its connection before the request's body had all
 * arrived (Node ends the body with an `aborted` ECONNRESET), rather than the server's refusing it.
 */
export function clientHungUp(request: FastifyRequest, error: Error & { code?: unknown }): boolean {
  return !request.raw.complete && error.code === 'ECONNRESET';
}

/** Connections over the per-address cap; each request on one is answered 429. */
const overCap = new WeakSet<Socket>();

export function overConnectionCap(request: FastifyRequest): boolean {
  return overCap.has(request.raw.socket);
}

/** Installs the idle-connection decisions and the connection caps on the HTTP server. */
export function boundClients(server: Server, config: Config, log: FastifyBaseLogger): void {
  const idle = config.requestIdleTimeoutMs;
  const served = new WeakSet<Socket>();

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    inFlight.set(socket, { req, res });
    const done = () => {
      if (inFlight.get(socket)?.res === res) inFlight.delete(socket);
      served.add(socket);
    };
    res.once('finish', () => {
      done();
      // Answered before its body was all in (a 401 to an upload, a 413, a GET with a body): the rest
      // is read and thrown away so the client gets the answer and may reuse the connection, but for
      // at most the idle time. Read for as long as it came, one byte every 29 seconds held the
      // connection for ever, past the body limit too, without an account.
      if (!req.complete && !socket.destroyed) closeUnlessComplete(req, socket, idle);
    });
    res.once('close', done);
  });

  // An Expect other than 100-continue (RFC 9110 §10.1.1): Node would answer 417 with no body.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const body = JSON.stringify(errorBody(errorShapeOf(req as { method: string; url: string }), `Expect: ${String(req.headers.expect)} is not understood; only 100-continue is`));
    res.writeHead(417, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body), Connection: 'close' }).end(body);
  });

  // With a listener here, Node leaves an idle connection to it rather than destroying it.
  server.on('timeout', (socket: Socket) => {
    if (overCap.has(socket)) return socket.destroy();
    const current = inFlight.get(socket);
    if (!current) {
      // A first request whose headers stopped, or an idle keep-alive connection (closed quietly, as Node does).
      if (!served.has(socket)) writeAndClose(socket, rawErrorResponse(408, 'ApiError', headersMessage(idle)));
      return socket.destroy();
    }
    const { req, res } = current;
    // The answer is going out and the client stopped reading it.
    if (res.headersSent) return socket.destroy();
    // The body is being read and the client stopped sending it.
    if (!req.complete && req.readableFlowing === true) {
      answeredOnConnection.set(req, { status: 408, message: bodyMessage(idle) });
      log.info({ method: req.method, url: loggedUrl(req.url ?? ''), remoteAddress: socket.remoteAddress }, 'request body stopped arriving: answered 408 and closed');
      writeAndClose(socket, rawErrorResponse(408, errorShapeOf(req as { method: string; url: string }), bodyMessage(idle)));
      return;
    }
    // The server is busy (authenticating, waiting on storage): not the client's idleness.
    socket.setTimeout(idle);
  });

  if (config.maxConnections > 0) server.maxConnections = config.maxConnections;
  // Behind a trusted proxy every connection comes from the proxy; limiting clients is its job.
  const perAddress = config.trustProxy ? 0 : config.maxConnectionsPerIp;
  if (perAddress > 0) {
    const open = new Map<string, number>();
    server.on('connection', (socket: Socket) => {
      // An IPv6 client is counted by its /64, as the throttles count it: one host holds a whole /64.
      const address = clientKey(socket.remoteAddress ?? '');
      const count = (open.get(address) ?? 0) + 1;
      open.set(address, count);
      socket.once('close', () => {
        const left = (open.get(address) ?? 1) - 1;
        if (left > 0) open.set(address, left);
        else open.delete(address);
      });
      if (count > perAddress) {
        overCap.add(socket);
        socket.setTimeout(Math.min(idle, OVER_CAP_GRACE_MS));
      }
    });
  }
}

/** uri-host [":" port] (RFC 3986): an IP literal in brackets or a name or IPv4 address, and digits. */
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~%!$&'()*+,;=]+)(?::\d{1,5})?$/;

/**
 * What is wrong with a request's headers, if anything, with its answer; checked on every request,
 * in one pass over its raw headers (Node keeps only the first of most repeated headers, so repeats
 * are looked for here).
 * - Host (RFC 9112 §3.2): an HTTP/1.1 request without one, any request with two, or one that is no
 *   host, is a 400. Node takes any text.
 * - Two Authorization headers are a 400: a proxy in front that keeps the last would have checked
 *   another credential than the one Hoard acts on.
 * - A transfer coding other than `chunked` alone is a 501 (RFC 9112 §6.1): Node takes `gzip,
 *   chunked` and hands on the coded bytes, which were stored as a file's (docs/decisions.md, "No
 *   content coding on request bodies"). Its body is not read, so its connection is closed.
 */
export function headerProblem(request: FastifyRequest): { status: number; message: string; close?: true } | null {
  const { host, authorization } = request.headers;
  if (host === undefined) return request.raw.httpVersion === '1.1' ? { status: 400, message: 'The request has no Host header (HTTP/1.1 requires one)' } : null;
  if (!HOST.test(host)) return { status: 400, message: 'The Host header is not a host name or address (with an optional port)' };
  const raw = request.raw.rawHeaders;
  let hosts = 0;
  let authorizations = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host') hosts += 1;
    else if (authorization !== undefined && name.length === 13 && name.toLowerCase() === 'authorization') authorizations += 1;
  }
  if (hosts > 1) return { status: 400, message: 'The request has more than one Host header' };
  if (authorizations > 1) return { status: 400, message: 'The request has more than one Authorization header', close: true };
  const coding = request.headers['transfer-encoding'];
  if (coding !== undefined && coding.trim().toLowerCase() !== 'chunked') {
    const quoted = coding.length > 64 ? `${coding.slice(0, 64)}…` : coding;
    return { status: 501, message: `Transfer-Encoding "${quoted}" is not supported: send the body with Content-Length, or chunked alone`, close: true };
  }
  return null;
}

export function overCapMessage(config: Config): string {
  return `Too many open connections from this address (at most ${config.maxConnectionsPerIp}); close some and retry`;
}

function bodyMessage(idleMs: number): string {
  return `The request body stopped arriving: no data for ${seconds(idleMs)}`;
}

function headersMessage(idleMs: number): string {
  return `The request headers were not complete within ${seconds(idleMs)}`;
}

function closeUnlessComplete(req: IncomingMessage, socket: Socket, ms: number): void {
  const timer = setTimeout(() => {
    if (!req.complete) socket.destroy();
  }, ms);
  // Both listeners go with the timer: a keep-alive connection answers many requests, and one left
  // on its socket per early answer piled up (Node warned of a leak at the eleventh).
  const stop = () => {
    clearTimeout(timer);
    req.off('end', stop);
    socket.off('close', stop);
  };
  req.once('end', stop);
  socket.once('close', stop);
}

function writeAndClose(socket: Socket, response: string): void {
  if (socket.writable) socket.write(response);
  socket.destroy();
}

/** The method and path of the request line at the start of `packet`, and that line's length. */
function requestLineOf(packet: Buffer | undefined): { method: string; url: string; length: number } | null {
  if (!packet) return null;
  // The data Node was parsing (one read, at most 64 KiB): a URL longer than that is cut short.
  const text = packet.toString('latin1');
  const match = /^([A-Z]+) (\/\S*)/.exec(text);
  if (!match) return null;
  const end = text.indexOf('\r\n');
  return { method: match[1]!, url: match[2]!, length: end < 0 ? text.length : end };
}

/** Node's 'clientError': a request it could not parse or that missed the headers deadline. */
function answerClientError(error: Error & { code?: string; rawPacket?: Buffer }, socket: Socket, idleMs: number): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const line = requestLineOf(error.rawPacket);
  let status = 400;
  let message = 'The request is not valid HTTP/1.1';
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    status = 408;
    message = headersMessage(idleMs);
  } else if (error.code === 'HPE_HEADER_OVERFLOW') {
    if (line && line.length > LONG_REQUEST_LINE) {
      status = 414;
      message = `The URL is too long (the request line and headers may take ${MAX_HEADER_BYTES / 1024} KiB)`;
    } else {
      status = 431;
      message = `The request headers are too large (at most ${MAX_HEADER_BYTES / 1024} KiB)`;
    }
  }
  const shape = line ? errorShapeOf(line) : 'ApiError';
  const answer = () => writeAndClose(socket, rawErrorResponse(status, shape, message));
  const current = inFlight.get(socket);
  if (!current) answer();
  else if (current.req.complete) {
    // Bytes after a whole request that are no request: that request's answer goes out first, then
    // this one, and the connection closes.
    if (current.res.writableFinished) answer();
    else current.res.once('finish', answer).once('close', () => socket.destroy());
  } else if (!current.res.headersSent) {
    // The request's own body is badly framed (a chunk size that is no number…). Node reports it
    // after handing the request over; nothing of its answer is written yet, so this is its answer.
    answeredOnConnection.set(current.req, { status, message });
    answer();
  }
  // Half-way through the answer of the request whose body broke: nothing more can be said on it.
  else socket.destroy();
}

/** Errors Fastify's router answers by itself, which would echo the URL. */
function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  if (error.code === 'FST_ERR_BAD_URL') void sendError(request, reply, 400, 'The URL is not valid: it has a malformed percent-encoded character');
  else if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') void sendError(request, reply, 414, `A path segment is too long (at most ${MAX_PARAM_LENGTH} characters)`);
  else void handleError(error, request, reply);
}
