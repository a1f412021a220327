import { createHmac } from 'node:crypto';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { ReceiverRefusedError, resolveReceiver, type Lookup, type VettedAddress } from './ssrf-guard.ts';

// Not `import http from 'node:http'`: as an ES module import it reads every export, and the lazy
// WebSocket ones load Node's fetch implementation (undici), about 2 MiB of resident memory from
// start that nothing here uses.
const http = process.getBuiltinModule('node:http');

/** One signed POST of a webhook body to its receiver (Standard Webhooks), and how it went. */

export const SECRET_PREFIX = 'whsec_';
export const USER_AGENT = 'Hoard-Webhooks/1';
export const DELIVERY_TIMEOUT_MS = 10_000;

/** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` keyed with the base64-decoded part after `whsec_`. */
export function signWebhook(secret: string, messageId: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${messageId}.${timestampSeconds}.${body}`).digest('base64')}`;
}

/**
 * `error` is what the webhook's owner sees in the deliveries list: it never names the addresses a
 * receiver's name resolved to or that a connection went to (that would let anyone who may create a
 * webhook map the instance's internal network). `detail`, when there is more to say, is for the
 * instance's log only.
 */
export type DeliveryResult =
  | { result: 'delivered'; status: number }
  /** Worth trying again later: 408, 429, 5xx, network errors, time-outs. */
  | { result: 'retry'; status: number | null; error: string; detail?: string }
  /** Trying again would not help: other statuses, redirects, refused or invalid receivers. */
  | { result: 'final'; status: number | null; error: string; detail?: string };

export const RECEIVER_REFUSED = "Refused to deliver: the receiver's address is not allowed (private, loopback or other non-public network)";

export interface DeliveryRequest {
  url: string;
  secret: string;
  /** A replaced secret still within its overlap: the delivery is signed by it too (a second `v1,…`). */
  previousSecret?: string | undefined;
  /** `webhook-id`: the event ID, the same on every attempt. */
  messageId: string;
  body: string;
  allowPrivate: boolean;
  timeoutMs?: number;
  /** Resolver override (tests). */
  lookup?: Lookup;
}

export function classifyStatus(status: number): DeliveryResult {
  if (status >= 200 && status < 300) return { result: 'delivered', status };
  if (status >= 300 && status < 400) return { result: 'final', status, error: `Receiver answered HTTP ${status}; redirects are not followed` };
  // 5xx: the receiver's own trouble, worth another attempt; a status past 599 is no HTTP status.
  if (status === 408 || status === 429 || (status >= 500 && status < 600)) return { result: 'retry', status, error: `Receiver answered HTTP ${status}` };
  return { result: 'final', status, error: `Receiver answered HTTP ${status}` };
}

/** A resolver that only ever answers the address the SSRF guard checked (DNS rebinding protection). */
function pinnedLookup(vetted: VettedAddress): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address: vetted.address, family: vetted.family }]);
    else callback(null, vetted.address, vetted.family);
  }) as unknown as LookupFunction;
}

/** The whole error, for the log: its message may name addresses. */
const networkError = (error: unknown) => {
  const code = (error as NodeJS.ErrnoException).code;
  const message = error instanceof Error ? error.message : String(error);
  return code && !message.includes(code) ? `${code}: ${message}` : message;
};

/** Only the error's code (e.g. ` (ECONNREFUSED)`), which names no address, for the owner. */
const codeOf = (error: unknown) => {
  const code = (error as NodeJS.ErrnoException).code;
  return typeof code === 'string' && /^[A-Z][A-Z0-9_]*$/.test(code) ? ` (${code})` : '';
};

/** Sends one attempt. Never throws: every failure is a DeliveryResult. */
export async function sendWebhook(request: DeliveryRequest): Promise<DeliveryResult> {
  let target: URL;
  try {
    target = new URL(request.url);
  } catch {
    return { result: 'final', status: null, error: 'The webhook URL is not a valid URL' };
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') return { result: 'final', status: null, error: 'The webhook URL must use http or https' };

  // One deadline for the whole attempt (contract §5: 10 s per attempt), resolving the name included:
  // a resolver that never answers must not hold a delivery slot for longer.
  const timeoutMs = request.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const deadline = Date.now() + timeoutMs;
  const timedOut: DeliveryResult = { result: 'retry', status: null, error: `No response within ${timeoutMs / 1000} s` };
  let vetted: VettedAddress;
  let resolveTimer: NodeJS.Timeout | undefined;
  try {
    const resolved = await Promise.race([
      resolveReceiver(target.hostname, { allowPrivate: request.allowPrivate, ...(request.lookup ? { lookup: request.lookup } : {}) }),
      new Promise<null>((resolve) => (resolveTimer = setTimeout(() => resolve(null), timeoutMs))),
    ]);
    if (resolved === null) return timedOut;
    vetted = resolved;
  } catch (error) {
    // A name that resolves only to addresses the guard refuses is answered as one that does not
    // resolve: same words, retried alike. Told apart (final and generic, against retried and named)
    // the records let an owner find out which internal names exist. What it really was goes to
    // the log (`detail`).
    if (error instanceof ReceiverRefusedError && !error.byName) return { result: 'final', status: null, error: RECEIVER_REFUSED, detail: error.message };
    const detail = error instanceof ReceiverRefusedError ? error.message : `Could not resolve ${target.hostname}: ${networkError(error)}`;
    return { result: 'retry', status: null, error: `Could not resolve ${target.hostname} to a public address`, detail };
  } finally {
    clearTimeout(resolveTimer);
  }
  const timestamp = Math.floor(Date.now() / 1000);
  const headers = {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(request.body)),
    'user-agent': USER_AGENT,
    'webhook-id': request.messageId,
    'webhook-timestamp': String(timestamp),
    // Space-separated signatures, one per secret (Standard Webhooks): a receiver holding either verifies.
    'webhook-signature': [request.secret, request.previousSecret]
      .filter((secret): secret is string => secret !== undefined)
      .map((secret) => signWebhook(secret, request.messageId, timestamp, request.body))
      .join(' '),
  };
  const client = target.protocol === 'https:' ? https : http;

  return new Promise<DeliveryResult>((resolve) => {
    let settled = false;
    const settle = (result: DeliveryResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    // The Host header and TLS server name stay the URL's host name; only the connection is pinned.
    // No agent: one connection per attempt, never reused across differently vetted addresses.
    const outgoing = client.request(target, { method: 'POST', headers, agent: false, lookup: pinnedLookup(vetted) }, (response) => {
      // Only the status matters; the body is not read.
      settle(classifyStatus(response.statusCode ?? 0));
      response.destroy();
    });
    const timer = setTimeout(() => {
      settle(timedOut);
      outgoing.destroy();
    }, Math.max(0, deadline - Date.now()));
    outgoing.on('error', (error) => settle({ result: 'retry', status: null, error: `Request to the receiver failed${codeOf(error)}`, detail: `Request failed: ${networkError(error)}` }));
    outgoing.end(request.body);
  });
}
