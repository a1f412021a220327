import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyStatus, sendWebhook, signWebhook } from '../../src/webhooks/deliver.ts';
import { loadSecretBox, SecretBox } from '../../src/auth/secret-box.ts';
import { newWebhookSecret } from '../../src/webhooks/webhooks.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';

let server: http.Server;
let port: number;
let answer: (request: http.IncomingMessage, response: http.ServerResponse) => void = (_q, r) => r.end();
const seen: Array<{ host: string | undefined; headers: http.IncomingHttpHeaders; body: string }> = [];

beforeAll(async () => {
  server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      seen.push({ host: request.headers.host, headers: request.headers, body: Buffer.concat(chunks).toString() });
      answer(request, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('signWebhook', () => {
  it('produces signatures the standardwebhooks reference library accepts', () => {
    const secret = newWebhookSecret();
    const timestamp = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({ version: 1, id: 'evt_1', type: 'file.ready', data: { name: 'ü.png' } });
    const signature = signWebhook(secret, 'evt_1', timestamp, body);
    expect(signature).toMatch(/^v1,/);
    expect(new Webhook(secret).sign('evt_1', new Date(timestamp * 1000), body)).toBe(signature);
    expect(() => new Webhook(secret).verify(body, { 'webhook-id': 'evt_1', 'webhook-timestamp': String(timestamp), 'webhook-signature': signature })).not.toThrow();
    expect(() => new Webhook(newWebhookSecret()).verify(body, { 'webhook-id': 'evt_1', 'webhook-timestamp': String(timestamp), 'webhook-signature': signature })).toThrow();
  });
});

describe('classifyStatus', () => {
  it.each([
    [200, 'delivered'],
    [204, 'delivered'],
    [299, 'delivered'],
    [301, 'final'],
    [302, 'final'],
    [307, 'final'],
    [400, 'final'],
    [401, 'final'],
    [404, 'final'],
    [410, 'final'],
    [408, 'retry'],
    [429, 'retry'],
    [500, 'retry'],
    [502, 'retry'],
    [503, 'retry'],
    [599, 'retry'],
    // No HTTP status: not the receiver's passing trouble that 5xx says.
    [600, 'final'],
    [999, 'final'],
  ])('HTTP %i is %s', (status, result) => {
    expect(classifyStatus(status).result).toBe(result);
  });
});

describe('sendWebhook', () => {
  const secret = newWebhookSecret();
  const base = { secret, messageId: 'evt_abc', body: '{"version":1}', allowPrivate: true };

  it('connects to the vetted address while keeping the host name in Host (DNS pinning)', async () => {
    answer = (_q, r) => r.writeHead(204).end();
    seen.length = 0;
    // The name does not exist in DNS: only the guard's (test) resolver knows it, so the request can
    // only reach the receiver through the pinned address.
    const lookups: string[] = [];
    const result = await sendWebhook({
      ...base,
      url: `http://receiver.hoard-test.invalid:${port}/in`,
      lookup: async (name) => {
        lookups.push(name);
        return [{ address: '127.0.0.1', family: 4 }];
      },
    });
    expect(result).toEqual({ result: 'delivered', status: 204 });
    expect(lookups).toEqual(['receiver.hoard-test.invalid']);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.host).toBe(`receiver.hoard-test.invalid:${port}`);
    expect(seen[0]!.headers['webhook-id']).toBe('evt_abc');
    expect(seen[0]!.headers['user-agent']).toBe('Hoard-Webhooks/1');
    expect(seen[0]!.body).toBe('{"version":1}');
    expect(() => new Webhook(secret).verify(seen[0]!.body, seen[0]!.headers as Record<string, string>)).not.toThrow();
  });

  it('refuses a name resolving to a private address without connecting, answered as a name that does not resolve', async () => {
    seen.length = 0;
    const result = await sendWebhook({ ...base, allowPrivate: false, url: `http://sneaky.hoard-test.invalid:${port}/`, lookup: async () => [{ address: '::ffff:127.0.0.1', family: 6 }] });
    // The record says what it says of a name that does not resolve, and is retried alike: told apart,
    // an owner could find out which internal names exist. What the name resolves to is in the detail, for the log.
    expect(result).toEqual({
      result: 'retry',
      status: null,
      error: 'Could not resolve sneaky.hoard-test.invalid to a public address',
      detail: expect.stringMatching(/^Refused to deliver: sneaky\.hoard-test\.invalid resolves to ::ffff:127\.0\.0\.1, a loopback address/),
    });
    const missing = await sendWebhook({ ...base, allowPrivate: false, url: 'http://absent.hoard-test.invalid/', lookup: async () => [] });
    expect(missing).toMatchObject({ result: 'retry', error: 'Could not resolve absent.hoard-test.invalid to a public address' });
    expect(seen).toHaveLength(0);
  });

  it('retries time-outs, refused connections and unresolvable names', async () => {
    answer = () => undefined; // never answers
    const slow = await sendWebhook({ ...base, url: `http://127.0.0.1:${port}/slow`, timeoutMs: 200 });
    expect(slow).toEqual({ result: 'retry', status: null, error: 'No response within 0.2 s' });
    // The time-out covers the whole attempt, resolving the receiver's name included.
    const began = Date.now();
    const stuckResolver = await sendWebhook({ ...base, url: 'http://slow-dns.hoard-test.invalid/', timeoutMs: 200, lookup: () => new Promise(() => undefined) });
    expect(stuckResolver).toEqual({ result: 'retry', status: null, error: 'No response within 0.2 s' });
    expect(Date.now() - began).toBeLessThan(2000);

    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const refused = await sendWebhook({ ...base, url: `http://127.0.0.1:${closedPort}/` });
    // The error code only: the message names the address connected to, which goes to the log.
    expect(refused).toMatchObject({ result: 'retry', status: null, error: 'Request to the receiver failed (ECONNREFUSED)', detail: expect.stringContaining(`127.0.0.1:${closedPort}`) });

    const missing = await sendWebhook({ ...base, url: 'http://nothing.hoard-test.invalid/', lookup: async () => [] });
    expect(missing).toMatchObject({ result: 'retry', error: 'Could not resolve nothing.hoard-test.invalid to a public address', detail: expect.stringContaining('ENOTFOUND') });
    const failing = await sendWebhook({ ...base, url: 'http://flaky.hoard-test.invalid/', lookup: async () => { throw Object.assign(new Error('resolver 10.0.0.53 timed out'), { code: 'EAI_AGAIN' }); } });
    expect(failing).toMatchObject({ result: 'retry', error: 'Could not resolve flaky.hoard-test.invalid to a public address', detail: expect.stringContaining('10.0.0.53') });
  });

  it('treats invalid URLs and other schemes as final', async () => {
    expect(await sendWebhook({ ...base, url: 'ftp://example.com/' })).toMatchObject({ result: 'final' });
    expect(await sendWebhook({ ...base, url: 'nonsense' })).toMatchObject({ result: 'final' });
  });
});

describe('SecretBox', () => {
  it('round-trips, and refuses another key, another context or an altered value', () => {
    const box = new SecretBox('k'.repeat(40));
    const sealed = box.seal('whsec_secret', 'hook1');
    expect(sealed).toMatch(/^v1\./);
    expect(sealed).not.toContain('secret');
    expect(box.seal('whsec_secret', 'hook1')).not.toBe(sealed);
    expect(box.open(sealed, 'hook1')).toBe('whsec_secret');
    expect(() => box.open(sealed, 'hook2')).toThrow();
    expect(() => new SecretBox('j'.repeat(40)).open(sealed, 'hook1')).toThrow();
    const altered = sealed.slice(0, -2) + (sealed.endsWith('A') ? 'BB' : 'AA');
    expect(() => box.open(altered, 'hook1')).toThrow();
  });

  it('generates DATA_DIR/secret.key once (mode 0600) when SECRET_KEY is unset', () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-key-'));
    try {
      const first = loadSecretBox({ secretKey: null, dataDir }, false);
      const file = path.join(dataDir, 'secret.key');
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      const sealed = first.seal('value', 'ctx');
      // A second process on the same DATA_DIR reads the same key.
      expect(loadSecretBox({ secretKey: null, dataDir }, false).open(sealed, 'ctx')).toBe('value');
      expect(fs.readdirSync(dataDir)).toEqual(['secret.key']);
      // SECRET_KEY is another key.
      expect(() => loadSecretBox({ secretKey: 's'.repeat(32), dataDir }, false).open(sealed, 'ctx')).toThrow();
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('configuration', () => {
  it('reads SECRET_KEY (at least 32 characters, never echoed) and the test-only retry schedule', () => {
    expect(loadConfig({ SECRET_KEY: 'x'.repeat(32), WEBHOOK_RETRY_DELAYS_MS: '100,250' })).toMatchObject({ secretKey: 'x'.repeat(32), webhookRetryDelaysMs: [100, 250] });
    expect(loadConfig({})).toMatchObject({ secretKey: null, webhookRetryDelaysMs: null });
    expect(() => loadConfig({ SECRET_KEY: 'too-short-secret' })).toThrow(ConfigError);
    expect(() => loadConfig({ SECRET_KEY: 'too-short-secret' })).toThrow(/^SECRET_KEY=\(hidden\) must be at least 32 characters/);
    expect(() => loadConfig({ WEBHOOK_RETRY_DELAYS_MS: '1s,2s' })).toThrow(/^WEBHOOK_RETRY_DELAYS_MS=/);
  });
});
