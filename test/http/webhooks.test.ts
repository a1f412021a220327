import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp, uniqueEmail } from '../support/client.ts';
import { createToken, uploadFile } from '../support/uploads.ts';
import { deliveryJobKey, emitFileReady, WEBHOOK_DELIVERY_JOB, type FileReadyFile } from '../../src/webhooks/outbox.ts';
import { fileReadyEventSchema } from '../../src/api/webhooks.ts';

/**
 * A real webhook receiver on 127.0.0.1. Every request is checked with the `standardwebhooks`
 * reference library against the secret of the webhook registered for its path; the answer for each
 * path is scripted (a list of statuses, the last one repeating).
 */
interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  payload: any;
  verified: boolean;
  verifyError: string | null;
}

class Receiver {
  readonly received: Received[] = [];
  private readonly secrets = new Map<string, string>();
  private readonly scripts = new Map<string, Array<number | { status: number; headers: Record<string, string> }>>();
  /** What happens at a path between a request's arrival and its answer. */
  readonly meanwhile = new Map<string, () => Promise<void>>();
  private server!: http.Server;
  url = '';

  async start(): Promise<void> {
    this.server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (c: Buffer) => chunks.push(c));
      request.on('end', async () => {
        const path = request.url ?? '/';
        await this.meanwhile.get(path)?.();
        const body = Buffer.concat(chunks).toString('utf8');
        let verified = false;
        let verifyError: string | null = null;
        try {
          const secret = this.secrets.get(path);
          if (!secret) throw new Error(`no secret registered for ${path}`);
          new Webhook(secret).verify(body, request.headers as Record<string, string>);
          verified = true;
        } catch (error) {
          verifyError = (error as Error).message;
        }
        this.received.push({ path, headers: request.headers, body, payload: body ? JSON.parse(body) : null, verified, verifyError });
        const script = this.scripts.get(path) ?? [200];
        const next = script.length > 1 ? script.shift()! : script[0]!;
        const answer = typeof next === 'number' ? { status: next, headers: {} } : next;
        response.writeHead(answer.status, answer.headers);
        response.end('ok');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Registers a path's secret (for verification) and its scripted answers. */
  expect(path: string, secret: string, answers: Array<number | { status: number; headers: Record<string, string> }> = [200]) {
    this.secrets.set(path, secret);
    this.scripts.set(path, [...answers]);
  }

  at(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
async function waitFor<T>(probe: () => Promise<T | undefined | null | false>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(50);
  }
}

let server: TestServer;
let admin: Awaited<ReturnType<typeof signUp>>;
let receiver: Receiver;
let pathCounter = 0;
const servers: TestServer[] = [];

// Fast retries (test-only knob); the deliveries are still real HTTP requests.
const fastRetries = { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_DELAYS_MS: '100,100,100' };

beforeAll(async () => {
  receiver = new Receiver();
  await receiver.start();
  server = await startTestServer(fastRetries);
  admin = await signUp(server.baseUrl);
});
afterAll(async () => {
  for (const extra of servers) await extra.close();
  await server.close();
  await receiver.stop();
});

async function signIn(baseUrl: string, email: string, password: string): Promise<Client> {
  const client = new Client(baseUrl);
  const response = await client.post('/api/auth/login', { email, password });
  expect(response.status).toBe(200);
  return client;
}

async function createMember(on: TestServer = server, by: Client = admin): Promise<Client & { userId: string }> {
  const email = uniqueEmail('hooks');
  const created = await by.post('/api/users', { email, password: 'member password' });
  expect(created.status).toBe(201);
  const client = (await signIn(on.baseUrl, email, 'member password')) as Client & { userId: string };
  client.userId = created.body.data.user.id;
  return client;
}

/** A server of the test's own whose jobs run only when the test runs them (`runDueJobs`). */
async function quietServer(): Promise<TestServer> {
  const quiet = await startTestServer(fastRetries);
  servers.push(quiet);
  await quiet.jobs.stop();
  return quiet;
}

/** Creates a webhook pointing at a fresh receiver path scripted with `answers`. */
async function createHook(client: Client, answers?: Parameters<Receiver['expect']>[2], name = 'receiver') {
  const path = `/hook/${++pathCounter}`;
  const response = await client.post('/api/webhooks', { name, url: receiver.url + path });
  expect(response.status).toBe(201);
  receiver.expect(path, response.body.data.secret, answers);
  return { path, webhook: response.body.data.webhook, secret: response.body.data.secret as string };
}

async function deliveries(client: Client, webhookId: string) {
  const response = await client.get(`/api/webhooks/${webhookId}/deliveries`);
  expect(response.status).toBe(200);
  return response.body.data.deliveries as Array<{ id: string; eventId: string; status: string; attempts: number; lastStatus: number | null; lastError: string | null; createdAt: string; deliveredAt: string | null }>;
}

async function settled(client: Client, webhookId: string, count = 1) {
  return waitFor(async () => {
    const list = await deliveries(client, webhookId);
    return list.length >= count && list.every((d) => d.status !== 'pending') ? list : null;
  });
}

const sampleFile = (n: number): FileReadyFile => ({
  id: `file${n}`,
  name: `photo-${n}.png`,
  mimeType: 'image/png',
  size: 1000 + n,
  visibility: 'PUBLIC',
  hasPassword: false,
  folderId: null,
  url: `${server.baseUrl}/abc${n}/photo-${n}.png`,
  rawUrl: `${server.baseUrl}/api/files/abc${n}/photo-${n}.png`,
});

describe('webhook management', () => {
  it('creates, lists, changes and deletes webhooks; the secret is shown once and stored encrypted', async () => {
    const created = await admin.post('/api/webhooks', { name: '  CI notifier ', url: 'https://hooks.example.com/hoard?x=1' });
    expect(created.status).toBe(201);
    const { webhook, secret } = created.body.data;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(webhook).toEqual({
      id: expect.any(String),
      name: 'CI notifier',
      url: 'https://hooks.example.com/hoard?x=1',
      enabled: true,
      createdAt: expect.stringMatching(/Z$/),
      updatedAt: webhook.createdAt,
    });

    const list = await admin.get('/api/webhooks');
    expect(list.status).toBe(200);
    expect(list.body.data.webhooks).toContainEqual(webhook);
    expect(list.text).not.toContain(secret.slice(6));

    const stored = await server.ctx.db.selectFrom('webhooks').select('secretEncrypted').where('id', '=', webhook.id).executeTakeFirstOrThrow();
    expect(stored.secretEncrypted).toMatch(/^v1\./);
    expect(stored.secretEncrypted).not.toContain(secret.slice(6, 20));
    expect(server.ctx.secretBox.open(stored.secretEncrypted, webhook.id)).toBe(secret);

    const patched = await admin.patch(`/api/webhooks/${webhook.id}`, { name: 'Renamed', url: 'http://hooks.example.com/new', enabled: false });
    expect(patched.status).toBe(200);
    expect(patched.body.data.webhook).toMatchObject({ id: webhook.id, name: 'Renamed', url: 'http://hooks.example.com/new', enabled: false });
    expect((await admin.patch(`/api/webhooks/${webhook.id}`, { enabled: true })).body.data.webhook).toMatchObject({ name: 'Renamed', enabled: true });

    expect((await admin.delete(`/api/webhooks/${webhook.id}`)).status).toBe(204);
    expect((await admin.delete(`/api/webhooks/${webhook.id}`)).status).toBe(404);
    expect((await admin.patch(`/api/webhooks/${webhook.id}`, { name: 'x' })).body).toEqual({ success: false, error: 'Webhook not found' });
    expect((await admin.get('/api/webhooks')).body.data.webhooks.map((w: { id: string }) => w.id)).not.toContain(webhook.id);
  });

  it('rejects invalid bodies naming the field', async () => {
    for (const [body, field] of [
      [{ name: 'x', url: 'ftp://example.com/' }, 'body.url'],
      [{ name: 'x', url: 'not a url' }, 'body.url'],
      [{ name: 'x', url: `https://example.com/${'a'.repeat(2030)}` }, 'body.url'],
      [{ name: '', url: 'https://example.com/' }, 'body.name'],
      [{ name: 'x'.repeat(81), url: 'https://example.com/' }, 'body.name'],
      [{ name: 'a\u0001b', url: 'https://example.com/' }, 'body.name'],
      [{ name: '\u200b\u200d', url: 'https://example.com/' }, 'body.name'],
      [{ url: 'https://example.com/' }, 'body.name'],
      [{ name: 'x', url: 'https://example.com/', secret: 'mine' }, 'body'],
    ] as const) {
      const response = await admin.post('/api/webhooks', body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.success).toBe(false);
      expect(response.body.error.startsWith(`${field}:`), response.body.error).toBe(true);
    }
    // Kept in the form it is read as and called: the parser drops tabs and line breaks and reads a
    // backslash as a slash, so the owner sees the URL that deliveries go to.
    for (const [written, read] of [
      ['https://exam\nple.com/hook\tA', 'https://example.com/hookA'],
      ['https:\\\\example.com\\hook', 'https://example.com/hook'],
      ['https://example.com/plain?x=1', 'https://example.com/plain?x=1'],
    ]) {
      const created = await admin.post('/api/webhooks', { name: 'normalised', url: written });
      expect(created.status, written).toBe(201);
      expect(created.body.data.webhook.url, written).toBe(read);
      expect((await admin.delete(`/api/webhooks/${created.body.data.webhook.id}`)).status).toBe(204);
    }
    const { webhook } = (await admin.post('/api/webhooks', { name: 'valid', url: 'https://example.com/' })).body.data;
    expect((await admin.patch(`/api/webhooks/${webhook.id}`, { enabled: 'yes' })).status).toBe(400);
    expect((await admin.patch(`/api/webhooks/${webhook.id}`, { url: 'javascript:alert(1)' })).status).toBe(400);
    // Cloud metadata is refused even with WEBHOOK_ALLOW_PRIVATE=true.
    const metadata = await admin.patch(`/api/webhooks/${webhook.id}`, { url: 'http://169.254.169.254/latest/meta-data/' });
    expect(metadata.status).toBe(400);
    expect(metadata.body.error).toMatch(/^url: .*metadata/);
    expect((await admin.delete(`/api/webhooks/${webhook.id}`)).status).toBe(204);
  });

  it('allows at most 10 webhooks per account, also under concurrent creation', async () => {
    const member = await createMember();
    const attempts = await Promise.all(Array.from({ length: 14 }, (_, i) => member.post('/api/webhooks', { name: `hook ${i}`, url: `https://example.com/${i}` })));
    expect(attempts.filter((r) => r.status === 201)).toHaveLength(10);
    const refused = attempts.filter((r) => r.status !== 201);
    expect(refused.map((r) => r.status)).toEqual([409, 409, 409, 409]);
    expect(refused[0]!.body).toEqual({ success: false, error: expect.stringMatching(/at most 10 webhooks/) });
    expect((await member.get('/api/webhooks')).body.data.webhooks).toHaveLength(10);
    const first = attempts.find((r) => r.status === 201)!.body.data.webhook;
    expect((await member.delete(`/api/webhooks/${first.id}`)).status).toBe(204);
    expect((await member.post('/api/webhooks', { name: 'eleventh', url: 'https://example.com/11' })).status).toBe(201);
  });

  it("answers 404 for another account's webhook", async () => {
    const owner = await createMember();
    const other = await createMember();
    const { webhook } = await createHook(owner);
    for (const response of [
      await other.patch(`/api/webhooks/${webhook.id}`, { name: 'mine now' }),
      await other.delete(`/api/webhooks/${webhook.id}`),
      await other.post(`/api/webhooks/${webhook.id}/test`),
      await other.get(`/api/webhooks/${webhook.id}/deliveries`),
    ]) {
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ success: false, error: 'Webhook not found' });
    }
    expect((await other.get('/api/webhooks')).body.data.webhooks).toEqual([]);
    expect((await owner.get('/api/webhooks')).body.data.webhooks[0]).toMatchObject({ id: webhook.id, name: 'receiver' });
  });

  it('needs a browser session: named tokens, the legacy credential and no credential get 401', async () => {
    const token = await admin.post('/api/tokens', { name: 'all scopes', scopes: ['files:read', 'files:upload', 'urls:read', 'urls:write'] });
    expect(token.status).toBe(201);
    const legacy = (await admin.get('/api/profile/upload-token')).body.data.uploadToken as string;
    const { webhook } = await createHook(admin);
    const anonymous = new Client(server.baseUrl);
    const calls: Array<[string, string, unknown?]> = [
      ['GET', '/api/webhooks'],
      ['POST', '/api/webhooks', { name: 'x', url: 'https://example.com/' }],
      ['PATCH', `/api/webhooks/${webhook.id}`, { name: 'x' }],
      ['DELETE', `/api/webhooks/${webhook.id}`],
      ['POST', `/api/webhooks/${webhook.id}/test`],
      ['GET', `/api/webhooks/${webhook.id}/deliveries`],
    ];
    for (const [method, path, json] of calls) {
      for (const credential of [token.body.data.secret as string, legacy]) {
        // A bearer credential is judged alone, even with the admin's cookie alongside.
        const response = await admin.request(method, path, { token: credential, ...(json ? { json } : {}) });
        expect(response.status, `${method} ${path}`).toBe(401);
        expect(response.body).toEqual({ success: false, error: 'Unauthorized' });
      }
      expect((await anonymous.request(method, path, json ? { json } : {})).status).toBe(401);
    }
    expect((await admin.get('/api/webhooks')).body.data.webhooks.map((w: { id: string }) => w.id)).toContain(webhook.id);
  });

  it('needs webhooks.manage (403 without it)', async () => {
    const member = await createMember();
    const roles = (await admin.get('/api/roles')).body.data.roles as Array<{ id: string; systemKey: string | null; permissions: string[] }>;
    const everyone = roles.find((r) => r.systemKey === 'everyone')!;
    await admin.patch(`/api/roles/${everyone.id}`, { permissions: everyone.permissions.filter((p) => p !== 'webhooks.manage') });
    try {
      for (const response of [await member.get('/api/webhooks'), await member.post('/api/webhooks', { name: 'x', url: 'https://example.com/' }), await member.get('/api/webhooks/whatever/deliveries')]) {
        expect(response.status).toBe(403);
        expect(response.body).toEqual({ success: false, error: 'You do not have permission to perform this action.' });
      }
    } finally {
      await admin.patch(`/api/roles/${everyone.id}`, { permissions: everyone.permissions });
    }
    expect((await member.get('/api/webhooks')).status).toBe(200);
  });

  it('sends no events for an account that may no longer manage its webhooks, which it could not see or stop', async () => {
    const member = await createMember();
    const { path } = await createHook(member);
    const roles = (await admin.get('/api/roles')).body.data.roles as Array<{ id: string; systemKey: string | null; permissions: string[] }>;
    const everyone = roles.find((r) => r.systemKey === 'everyone')!;
    await admin.patch(`/api/roles/${everyone.id}`, { permissions: everyone.permissions.filter((p) => p !== 'webhooks.manage') });
    try {
      expect((await uploadFile(member, 'unannounced.txt', 'quiet')).status).toBe(200);
      await server.jobs.runDueJobs();
      await sleep(300);
      expect(receiver.at(path)).toHaveLength(0);
    } finally {
      await admin.patch(`/api/roles/${everyone.id}`, { permissions: everyone.permissions });
    }
    expect((await uploadFile(member, 'announced.txt', 'heard')).status).toBe(200);
    await waitFor(async () => receiver.at(path).length > 0);
    expect(receiver.at(path).map((r) => r.payload.data.name)).toEqual(['announced.txt']);
  });
});

describe('delivery', () => {
  it('sends a signed test event', async () => {
    const { path, webhook } = await createHook(admin);
    const accepted = await admin.post(`/api/webhooks/${webhook.id}/test`);
    expect(accepted.status).toBe(202);
    expect(accepted.body.data.delivery).toMatchObject({ status: 'pending', attempts: 0, lastStatus: null, lastError: null, deliveredAt: null, eventId: expect.stringMatching(/^evt_/) });

    const [delivery] = await settled(admin, webhook.id);
    expect(delivery).toMatchObject({ id: accepted.body.data.delivery.id, status: 'delivered', attempts: 1, lastStatus: 200, lastError: null, deliveredAt: expect.stringMatching(/Z$/) });

    const [request] = receiver.at(path);
    expect(request!.verified, request!.verifyError ?? '').toBe(true);
    expect(request!.headers['user-agent']).toBe('Hoard-Webhooks/1');
    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.headers['webhook-id']).toBe(delivery!.eventId);
    expect(Number(request!.headers['webhook-timestamp'])).toBeCloseTo(Date.now() / 1000, -2);
    expect(request!.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    // The event's one definition, which the OpenAPI document shows under `webhooks`, reads it.
    expect(fileReadyEventSchema.safeParse(request!.payload).error).toBeUndefined();
    expect(request!.payload).toEqual({
      version: 1,
      id: delivery!.eventId,
      type: 'file.ready',
      occurredAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
      test: true,
      data: {
        id: expect.any(String),
        name: expect.any(String),
        mimeType: expect.any(String),
        size: expect.any(Number),
        visibility: 'PUBLIC',
        hasPassword: false,
        folderId: null,
        url: expect.stringMatching(new RegExp(`^${server.baseUrl}/`)),
        rawUrl: expect.stringMatching(new RegExp(`^${server.baseUrl}/api/files/`)),
      },
    });
  });

  it('retries a receiver answering 500 until it succeeds, with the same id and body', async () => {
    const { path, webhook } = await createHook(admin, [500, 503, 200]);
    await admin.post(`/api/webhooks/${webhook.id}/test`);
    const [delivery] = await settled(admin, webhook.id);
    expect(delivery).toMatchObject({ status: 'delivered', attempts: 3, lastStatus: 200, lastError: null });
    const requests = receiver.at(path);
    expect(requests).toHaveLength(3);
    expect(requests.every((r) => r.verified)).toBe(true);
    expect(new Set(requests.map((r) => r.headers['webhook-id'])).size).toBe(1);
    expect(new Set(requests.map((r) => r.body)).size).toBe(1);
  });

  it('gives up after the last attempt of the schedule, keeping the last error', async () => {
    const { path, webhook } = await createHook(admin, [503]);
    await admin.post(`/api/webhooks/${webhook.id}/test`);
    const [delivery] = await settled(admin, webhook.id);
    // WEBHOOK_RETRY_DELAYS_MS has three delays: four attempts.
    expect(delivery).toMatchObject({ status: 'failed', attempts: 4, lastStatus: 503, lastError: 'Receiver answered HTTP 503 (gave up after 4 attempts)', deliveredAt: null });
    expect(receiver.at(path)).toHaveLength(4);
  });

  it('does not retry a receiver answering 400', async () => {
    const { path, webhook } = await createHook(admin, [400, 200]);
    await admin.post(`/api/webhooks/${webhook.id}/test`);
    const [delivery] = await settled(admin, webhook.id);
    expect(delivery).toMatchObject({ status: 'failed', attempts: 1, lastStatus: 400, lastError: 'Receiver answered HTTP 400' });
    await sleep(700);
    expect(receiver.at(path)).toHaveLength(1);
    expect((await deliveries(admin, webhook.id))[0]!.attempts).toBe(1);
  });

  it('does not follow redirects', async () => {
    const target = `/hook/${++pathCounter}`;
    receiver.expect(target, 'whsec_AAAA', [200]);
    const { path, webhook } = await createHook(admin, [{ status: 307, headers: { location: receiver.url + target } }]);
    await admin.post(`/api/webhooks/${webhook.id}/test`);
    const [delivery] = await settled(admin, webhook.id);
    expect(delivery).toMatchObject({ status: 'failed', attempts: 1, lastStatus: 307, lastError: expect.stringMatching(/redirects are not followed/) });
    await sleep(300);
    expect(receiver.at(path)).toHaveLength(1);
    expect(receiver.at(target)).toHaveLength(0);
  });

  it('lists deliveries newest first', async () => {
    const { webhook } = await createHook(admin);
    for (let i = 0; i < 3; i++) {
      await admin.post(`/api/webhooks/${webhook.id}/test`);
      await sleep(5);
    }
    const list = await settled(admin, webhook.id, 3);
    expect(list).toHaveLength(3);
    const times = list.map((d) => Date.parse(d.createdAt));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    expect(Object.keys(list[0]!).sort()).toEqual(['attempts', 'createdAt', 'deliveredAt', 'eventId', 'id', 'lastError', 'lastStatus', 'status']);
  });
});

describe('emitFileReady', () => {
  it('queues one delivery per enabled webhook of the owner, in the caller’s transaction', async () => {
    const owner = await createMember();
    const bystander = await createMember();
    const first = await createHook(owner);
    const second = await createHook(owner);
    const disabled = await createHook(owner);
    const elsewhere = await createHook(bystander);
    expect((await owner.patch(`/api/webhooks/${disabled.webhook.id}`, { enabled: false })).status).toBe(200);

    // A rolled-back upload emits nothing.
    await expect(
      server.ctx.db.transaction().execute(async (trx) => {
        await emitFileReady(trx, owner.userId, sampleFile(0));
        throw new Error('upload failed');
      }),
    ).rejects.toThrow('upload failed');

    const file = { ...sampleFile(1), ownerOnlyField: 'never sent' } as FileReadyFile;
    const emitted = await server.ctx.db.transaction().execute((trx) => emitFileReady(trx, owner.userId, file));
    expect(emitted.eventId).toMatch(/^evt_/);
    expect(emitted.deliveryIds).toHaveLength(2);
    server.ctx.jobs.wake();

    for (const hook of [first, second]) {
      const [delivery] = await settled(owner, hook.webhook.id);
      expect(delivery).toMatchObject({ eventId: emitted.eventId, status: 'delivered', attempts: 1 });
      const [request] = receiver.at(hook.path);
      expect(request!.verified).toBe(true);
      expect(request!.payload).toEqual({
        version: 1,
        id: emitted.eventId,
        type: 'file.ready',
        occurredAt: expect.any(String),
        data: { id: 'file1', name: 'photo-1.png', mimeType: 'image/png', size: 1001, visibility: 'PUBLIC', hasPassword: false, folderId: null, url: sampleFile(1).url, rawUrl: sampleFile(1).rawUrl },
      });
    }
    expect(new Set(emitted.deliveryIds).size).toBe(2);
    expect(await deliveries(owner, disabled.webhook.id)).toEqual([]);
    expect(await deliveries(bystander, elsewhere.webhook.id)).toEqual([]);
    expect(receiver.at(disabled.path)).toHaveLength(0);
    expect(receiver.at(elsewhere.path)).toHaveLength(0);
  });

  it('emits nothing, cheaply, for an owner without webhooks', async () => {
    const lonely = await createMember();
    const emitted = await server.ctx.db.transaction().execute((trx) => emitFileReady(trx, lonely.userId, sampleFile(2)));
    expect(emitted).toEqual({ eventId: null, deliveryIds: [] });
  });
});

describe('durability and several processes', () => {
  it('a delivery pending when the server stops is delivered by the next process on the same database', async () => {
    const first = await startTestServer({ WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_DELAYS_MS: '1500' });
    const owner = await signUp(first.baseUrl);
    const { path, webhook } = await createHook(owner, [500, 200]);
    await owner.post(`/api/webhooks/${webhook.id}/test`);
    await waitFor(async () => (await deliveries(owner, webhook.id))[0]?.attempts === 1);
    expect((await deliveries(owner, webhook.id))[0]).toMatchObject({ status: 'pending', lastStatus: 500, lastError: 'Receiver answered HTTP 500' });
    await first.close();
    expect(receiver.at(path)).toHaveLength(1);

    const second = await startTestServer({ WEBHOOK_ALLOW_PRIVATE: 'true' }, { databaseUrl: first.databaseUrl, dataDir: first.dataDir });
    servers.push(second);
    const again = await signIn(second.baseUrl, owner.email, owner.password);
    const [delivery] = await settled(again, webhook.id);
    expect(delivery).toMatchObject({ status: 'delivered', attempts: 2, lastStatus: 200 });
    const requests = receiver.at(path);
    expect(requests).toHaveLength(2);
    // The restarted process decrypted the same secret: the signature still verifies.
    expect(requests.every((r) => r.verified)).toBe(true);
  });

  it('two processes on one database deliver each delivery exactly once', async () => {
    const shared = { SECRET_KEY: 'a shared secret key for both processes, 32+ chars', WEBHOOK_ALLOW_PRIVATE: 'true' };
    const a = await startTestServer(shared);
    servers.push(a);
    const b = await startTestServer(shared, { databaseUrl: a.databaseUrl, dataDir: a.dataDir });
    servers.push(b);
    const owner = await signUp(a.baseUrl);
    const hooks = [await createHook(owner), await createHook(owner)];
    const events = 30;
    let deliveryIds: string[] = [];
    // Half of the events at once, then both processes race for them: their background loops and an
    // explicit run each.
    await a.ctx.db.transaction().execute(async (trx) => {
      for (let n = 0; n < events / 2; n++) deliveryIds = deliveryIds.concat((await emitFileReady(trx, owner.userId, sampleFile(n))).deliveryIds);
    });
    const [ranByA, ranByB] = await Promise.all([a.jobs.runDueJobs(), b.jobs.runDueJobs()]);
    expect(ranByA + ranByB).toBeLessThanOrEqual(events);
    // The other half one by one, alternating the emitting process, as uploads would.
    for (let n = events / 2; n < events; n++) {
      const on = n % 2 ? a : b;
      const emitted = await on.ctx.db.transaction().execute((trx) => emitFileReady(trx, owner.userId, sampleFile(n)));
      deliveryIds = deliveryIds.concat(emitted.deliveryIds);
      on.ctx.jobs.wake();
    }
    expect(new Set(deliveryIds).size).toBe(events * hooks.length);
    for (const hook of hooks) {
      const list = await settled(owner, hook.webhook.id, events);
      expect(list.every((d) => d.status === 'delivered' && d.attempts === 1)).toBe(true);
      const requests = receiver.at(hook.path);
      expect(requests.every((r) => r.verified)).toBe(true);
      const ids = requests.map((r) => r.headers['webhook-id']);
      expect(ids).toHaveLength(events);
      expect(new Set(ids).size).toBe(events);
    }
    // A job's row goes after its handler has recorded the delivery, so the last ones may still be
    // on their way out when every delivery reads as delivered.
    const jobsLeft = () => a.ctx.db.selectFrom('jobs').select('id').where('type', '=', WEBHOOK_DELIVERY_JOB).execute();
    await waitFor(async () => (await jobsLeft()).length === 0, 5_000).catch(() => undefined);
    expect(await jobsLeft()).toEqual([]);
  });
});

describe('two attempts of one delivery at once', () => {
  it('records the one that reached the receiver, also when the other wrote its failure first', async () => {
    const { path, webhook } = await createHook(admin);
    // While this attempt waits for the receiver, another attempt of the same delivery (its process
    // had stood still past its job's lease) records that it got no answer in time.
    receiver.meanwhile.set(path, async () => {
      await server.ctx.db.updateTable('webhookDeliveries').set({ attempts: 1, lastError: 'No response within 10 s' }).where('webhookId', '=', webhook.id).execute();
    });
    await admin.post(`/api/webhooks/${webhook.id}/test`);
    const [delivery] = await waitFor(async () => {
      const list = await deliveries(admin, webhook.id);
      return list[0]?.status === 'delivered' ? list : undefined;
    });
    expect(delivery).toMatchObject({ status: 'delivered', lastStatus: 200, lastError: null });
    expect(receiver.at(path)).toHaveLength(1);
  });
});

describe('a process with another key', () => {
  it('leaves a delivery whose secret it cannot read to a process that can, and fails it only after the retries', async () => {
    const right = await startTestServer({ ...fastRetries, SECRET_KEY: 'the key every process should share, 32+ chars' });
    servers.push(right);
    const wrong = await startTestServer({ ...fastRetries, SECRET_KEY: 'another key, set by mistake on one process' }, { databaseUrl: right.databaseUrl, dataDir: right.dataDir });
    servers.push(wrong);
    await Promise.all([right.jobs.stop(), wrong.jobs.stop()]);
    const owner = await signUp(right.baseUrl);
    const { path, webhook } = await createHook(owner);
    await right.ctx.db.transaction().execute((trx) => emitFileReady(trx, owner.userId, sampleFile(3)));
    // The process with the other key takes it first: it cannot sign, so it tries again later.
    await wrong.jobs.runDueJobs();
    const [waiting] = await deliveries(owner, webhook.id);
    expect(waiting).toMatchObject({ status: 'pending', attempts: 1 });
    expect(waiting!.lastError).toMatch(/cannot be decrypted/);
    // What mends it without losing the webhook, its log and its ID: the same key, or a new secret.
    expect(waiting!.lastError).toMatch(/; give every process the same key, or, if the key was changed for good, rotate this webhook's secret \(Rotate secret\) and give the receiver the new one$/);
    await sleep(150);
    await right.jobs.runDueJobs();
    const [delivered] = await deliveries(owner, webhook.id);
    expect(delivered).toMatchObject({ status: 'delivered', attempts: 2, lastStatus: 200 });
    expect(receiver.at(path).map((r) => r.verified)).toEqual([true]);
    // Only a process with the other key: it gives up after the retries, saying why.
    await right.ctx.db.transaction().execute((trx) => emitFileReady(trx, owner.userId, sampleFile(4)));
    for (let i = 0; i < 4; i++) {
      await wrong.jobs.runDueJobs();
      await sleep(150);
    }
    const [failed] = await deliveries(owner, webhook.id);
    expect(failed).toMatchObject({ status: 'failed', attempts: 4 });
    expect(failed!.lastError).toMatch(/cannot be decrypted .*gave up after 4 attempts/);
  });
});

describe('disabling', () => {
  it('stops deliveries a webhook has not sent yet; a test event is still sent', async () => {
    const quiet = await quietServer();
    // What start-up scheduled (the audit prune) first, so that only the deliveries are counted below.
    await quiet.jobs.runDueJobs();
    const owner = await signUp(quiet.baseUrl);
    const { path, webhook } = await createHook(owner);
    await quiet.ctx.db.transaction().execute((trx) => emitFileReady(trx, owner.userId, sampleFile(7)));
    await owner.patch(`/api/webhooks/${webhook.id}`, { enabled: false });
    expect((await owner.post(`/api/webhooks/${webhook.id}/test`)).status).toBe(202);
    expect(await quiet.jobs.runDueJobs()).toBe(2);
    const list = await deliveries(owner, webhook.id);
    expect(list.map((d) => [d.status, d.attempts, d.lastError])).toEqual(
      expect.arrayContaining([
        ['failed', 0, 'The webhook was disabled before this delivery was sent'],
        ['delivered', 1, null],
      ]),
    );
    expect(receiver.at(path).map((r) => r.payload.test)).toEqual([true]);
  });

  it('keeps what the last attempt met for a delivery sent once before the webhook was disabled', async () => {
    const quiet = await quietServer();
    await quiet.jobs.runDueJobs();
    const owner = await signUp(quiet.baseUrl);
    const { path, webhook } = await createHook(owner, [500]);
    await quiet.ctx.db.transaction().execute((trx) => emitFileReady(trx, owner.userId, sampleFile(8)));
    expect(await quiet.jobs.runDueJobs()).toBe(1);
    expect((await deliveries(owner, webhook.id))[0]).toMatchObject({ status: 'pending', attempts: 1, lastStatus: 500 });
    await owner.patch(`/api/webhooks/${webhook.id}`, { enabled: false });
    await sleep(150);
    expect(await quiet.jobs.runDueJobs()).toBe(1);
    expect((await deliveries(owner, webhook.id))[0]).toMatchObject({
      status: 'failed',
      attempts: 1,
      lastStatus: 500,
      lastError: 'Receiver answered HTTP 500 (the webhook was disabled before it was sent again)',
    });
    expect(receiver.at(path)).toHaveLength(1);
  });
});

describe('resending', () => {
  it('sends a failed or delivered event again as a new delivery with the same body and webhook-id', async () => {
    // The receiver is misconfigured (404, final), then mended.
    const { path, webhook } = await createHook(admin, [404, 200]);
    const owner = await server.ctx.db.selectFrom('webhooks').select('userId').where('id', '=', webhook.id).executeTakeFirstOrThrow();
    const emitted = await server.ctx.db.transaction().execute((trx) => emitFileReady(trx, owner.userId, sampleFile(41)));
    server.ctx.jobs.wake();
    const [failed] = await settled(admin, webhook.id);
    expect(failed).toMatchObject({ eventId: emitted.eventId, status: 'failed', lastStatus: 404 });

    const resent = await admin.post(`/api/webhooks/${webhook.id}/deliveries/${failed!.id}/resend`);
    expect(resent.status).toBe(202);
    expect(resent.body.data.delivery).toMatchObject({ eventId: emitted.eventId, status: 'pending', attempts: 0 });
    const list = await settled(admin, webhook.id, 2);
    expect(list.map((d) => [d.id, d.status])).toEqual([
      [resent.body.data.delivery.id, 'delivered'],
      [failed!.id, 'failed'],
    ]);
    const [first, second] = receiver.at(path);
    expect(second!.verified, second!.verifyError ?? '').toBe(true);
    expect(second!.headers['webhook-id']).toBe(emitted.eventId);
    expect(second!.body).toBe(first!.body);

    // A delivered one may be sent again too (a receiver that lost it).
    const again = await admin.post(`/api/webhooks/${webhook.id}/deliveries/${resent.body.data.delivery.id}/resend`);
    expect(again.status).toBe(202);
    await settled(admin, webhook.id, 3);
    expect(receiver.at(path).map((r) => r.headers['webhook-id'])).toEqual([emitted.eventId, emitted.eventId, emitted.eventId]);
  });

  it('sends one copy of an event at a time: resends at once, or while a copy is pending, get a 409', async () => {
    const quiet = await quietServer();
    const owner = await signUp(quiet.baseUrl);
    const { webhook } = await createHook(owner);
    const emitted = await quiet.ctx.db.transaction().execute((trx) => emitFileReady(trx, owner.userId, sampleFile(43)));
    await quiet.jobs.runDueJobs();
    const [done] = await deliveries(owner, webhook.id);
    expect([done!.id, done!.status]).toEqual([emitted.deliveryIds[0], 'delivered']);

    const resend = () => owner.post(`/api/webhooks/${webhook.id}/deliveries/${done!.id}/resend`);
    const answers = await Promise.all([resend(), resend(), resend()]);
    expect(answers.map((a) => a.status).sort()).toEqual([202, 409, 409]);
    expect(answers.find((a) => a.status === 409)!.body.error).toBe('This event is still being sent to this webhook; resend it once that delivery is delivered or failed');
    // Still pending (the jobs are stopped): a later resend of the delivered one is refused too.
    expect((await resend()).status).toBe(409);
    const list = await deliveries(owner, webhook.id);
    expect(list.filter((d) => d.status === 'pending')).toHaveLength(1);
    await quiet.jobs.runDueJobs();
    expect((await resend()).status).toBe(202);
  });

  it('refuses a pending delivery, a disabled webhook, another webhook\'s or account\'s delivery, and too many at once', async () => {
    const quiet = await quietServer();
    const owner = await signUp(quiet.baseUrl);
    const { webhook } = await createHook(owner);
    const other = await createHook(owner);
    const emitted = await quiet.ctx.db.transaction().execute((trx) => emitFileReady(trx, owner.userId, sampleFile(42)));
    const pendingId = emitted.deliveryIds[0]!;
    const resend = (client: Client, webhookId: string, deliveryId: string) => client.post(`/api/webhooks/${webhookId}/deliveries/${deliveryId}/resend`);

    const pending = await resend(owner, webhook.id, pendingId);
    expect([pending.status, pending.body]).toEqual([409, { success: false, error: 'This event is still being sent to this webhook; resend it once that delivery is delivered or failed' }]);
    await quiet.jobs.runDueJobs();
    const [done] = await deliveries(owner, webhook.id);
    expect(done!.status).toBe('delivered');

    // Another webhook's delivery, an unknown one, another account's: 404, and nothing is sent.
    expect((await resend(owner, other.webhook.id, done!.id)).status).toBe(404);
    expect((await resend(owner, webhook.id, 'nosuchdelivery')).status).toBe(404);
    const stranger = await createMember(quiet, owner);
    const foreign = await resend(stranger, webhook.id, done!.id);
    expect([foreign.status, foreign.body.error]).toEqual([404, 'Webhook not found']);

    expect((await owner.patch(`/api/webhooks/${webhook.id}`, { enabled: false })).status).toBe(200);
    const disabled = await resend(owner, webhook.id, done!.id);
    expect([disabled.status, disabled.body.error]).toEqual([409, 'The webhook is disabled and sends nothing; enable it first']);
    expect((await owner.patch(`/api/webhooks/${webhook.id}`, { enabled: true })).status).toBe(200);
    expect(await deliveries(owner, webhook.id)).toHaveLength(1);

    // Ten a minute per account, the refusal while pending counted; the eleventh waits.
    for (let i = 0; i < 9; i++) {
      expect((await resend(owner, webhook.id, done!.id)).status).toBe(202);
      // Each copy is sent before the next resend: one copy of an event goes at a time.
      await quiet.jobs.runDueJobs();
    }
    const throttled = await resend(owner, webhook.id, done!.id);
    expect(throttled.status).toBe(429);
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await deliveries(owner, webhook.id)).toHaveLength(10);
  });

  it('tells a resend refused while a copy is pending when to try again: when that copy\'s next attempt has had its time', async () => {
    const quiet = await quietServer();
    const owner = await signUp(quiet.baseUrl);
    const { webhook } = await createHook(owner);
    const emitted = await quiet.ctx.db.transaction().execute((trx) => emitFileReady(trx, owner.userId, sampleFile(44)));
    const pendingId = emitted.deliveryIds[0]!;
    const resend = () => owner.post(`/api/webhooks/${webhook.id}/deliveries/${pendingId}/resend`);

    // Due now: its attempt ends within the 10 seconds a receiver has to answer.
    const due = await resend();
    expect([due.status, due.headers.get('retry-after')]).toEqual([409, '10']);

    // Its next attempt an hour away (a receiver that failed a few times): the wait follows it.
    const moved = await quiet.ctx.db.updateTable('jobs').set({ runAt: Date.now() + 3600_000 }).where('dedupeKey', '=', deliveryJobKey(pendingId)).where('type', '=', WEBHOOK_DELIVERY_JOB).executeTakeFirst();
    expect(Number(moved.numUpdatedRows)).toBe(1);
    const later = await resend();
    expect(later.status).toBe(409);
    expect(Number(later.headers.get('retry-after'))).toBeGreaterThanOrEqual(3605);
    expect(Number(later.headers.get('retry-after'))).toBeLessThanOrEqual(3610);
  });
});

describe('rotating the signing secret', () => {
  const verifies = (secret: string, request: Received) => {
    try {
      new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
      return true;
    } catch {
      return false;
    }
  };

  it('signs with the new and the replaced secret for a day, then with the new one alone', async () => {
    // An account of its own: test sends are limited per account, and the others of this file use the administrator's.
    const owner = await createMember();
    const { path, webhook, secret: first } = await createHook(owner);
    const rotated = await owner.post(`/api/webhooks/${webhook.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    const second = rotated.body.data.secret as string;
    expect(second).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(second).not.toBe(first);
    expect(rotated.body.data.webhook).toMatchObject({ id: webhook.id, name: webhook.name, url: webhook.url, enabled: true });
    expect(JSON.stringify((await owner.get('/api/webhooks')).body)).not.toContain(second);
    receiver.expect(path, second);

    await owner.post(`/api/webhooks/${webhook.id}/test`);
    await settled(owner, webhook.id);
    const [during] = receiver.at(path);
    expect(during!.headers['webhook-signature']!.toString().split(' ')).toHaveLength(2);
    expect([verifies(second, during!), verifies(first, during!)]).toEqual([true, true]);

    // A day later (the overlap's end, moved to now): the new secret alone.
    await server.ctx.db.updateTable('webhooks').set({ previousSecretUntil: Date.now() - 1 }).where('id', '=', webhook.id).execute();
    await owner.post(`/api/webhooks/${webhook.id}/test`);
    await settled(owner, webhook.id, 2);
    const after = receiver.at(path)[1]!;
    expect(after.headers['webhook-signature']!.toString().split(' ')).toHaveLength(1);
    expect([verifies(second, after), verifies(first, after)]).toEqual([true, false]);
  });

  it("keeps only the secret it replaced, is the owner's alone and needs a browser session", async () => {
    const owner = await createMember();
    const { path, webhook, secret: first } = await createHook(owner);
    const second = (await owner.post(`/api/webhooks/${webhook.id}/rotate-secret`)).body.data.secret as string;
    const third = (await owner.post(`/api/webhooks/${webhook.id}/rotate-secret`)).body.data.secret as string;
    receiver.expect(path, third);
    await owner.post(`/api/webhooks/${webhook.id}/test`);
    await settled(owner, webhook.id);
    const [request] = receiver.at(path);
    expect([verifies(third, request!), verifies(second, request!), verifies(first, request!)]).toEqual([true, true, false]);

    const stranger = await createMember();
    const foreign = await stranger.post(`/api/webhooks/${webhook.id}/rotate-secret`);
    expect([foreign.status, foreign.body.error]).toEqual([404, 'Webhook not found']);
    const token = await createToken(owner, ['files:read']);
    const scripted = await new Client(server.baseUrl).post(`/api/webhooks/${webhook.id}/rotate-secret`, undefined, { token });
    expect([scripted.status, scripted.body]).toEqual([401, { success: false, error: 'Unauthorized' }]);
    // Neither changed the secret.
    await owner.post(`/api/webhooks/${webhook.id}/test`);
    await settled(owner, webhook.id, 2);
    expect(verifies(third, receiver.at(path)[1]!)).toBe(true);
  });
});

describe('SSRF guard', () => {
  it('refuses loopback receivers unless WEBHOOK_ALLOW_PRIVATE=true', async () => {
    const strict = await startTestServer({});
    servers.push(strict);
    const owner = await signUp(strict.baseUrl);

    // A literal private address is refused when the webhook is created.
    const literal = await owner.post('/api/webhooks', { name: 'loopback', url: `${receiver.url}/hook/literal` });
    expect(literal.status).toBe(400);
    expect(literal.body.error).toMatch(/^url: 127\.0\.0\.1, a loopback address/);
    // A name that is always this machine, whatever a resolver says (RFC 6761), is refused as one.
    for (const host of ['localhost', 'LOCALHOST.', 'api.localhost']) {
      const named = await owner.post('/api/webhooks', { name: 'named', url: `http://${host}:8080/hook` });
      expect([named.status, named.body.error], host).toEqual([400, `url: ${host.toLowerCase().replace(/\.$/, '')}, always this machine, a loopback address; webhook receivers must be on public addresses (WEBHOOK_ALLOW_PRIVATE=true allows loopback and private ones)`]);
    }
    const unspecified = await owner.post('/api/webhooks', { name: 'nowhere', url: 'http://0.0.0.0/hook' });
    expect(unspecified.body.error).toMatch(/^url: 0\.0\.0\.0, an unspecified address/);

    // Test sends to webhooks that are not there send nothing, so they use none of the ten a minute.
    for (let i = 0; i < 12; i++) expect((await owner.post('/api/webhooks/nosuchwebhook/test')).status).toBe(404);

    // A name is resolved and checked at delivery. A receiver named localhost, as one made while
    // WEBHOOK_ALLOW_PRIVATE was on and kept after it was turned off, resolves to loopback.
    const port = new URL(receiver.url).port;
    const path = `/hook/${++pathCounter}`;
    const created = await owner.post('/api/webhooks', { name: 'by name', url: `http://receiver.example${path}` });
    expect(created.status).toBe(201);
    receiver.expect(path, created.body.data.secret);
    const webhookId = created.body.data.webhook.id;
    await strict.ctx.db.updateTable('webhooks').set({ url: `http://localhost:${port}${path}` }).where('id', '=', webhookId).execute();
    await owner.post(`/api/webhooks/${webhookId}/test`);
    const [delivery] = await settled(owner, webhookId);
    expect(delivery).toMatchObject({ status: 'failed', lastStatus: null, deliveredAt: null });
    // A generic reason: what an internal name resolves to is not shown (it goes to the log).
    expect(delivery!.lastError).toBe("Refused to deliver: the receiver's address is not allowed (private, loopback or other non-public network)");
    // Final: not retried.
    expect(delivery!.attempts).toBe(1);
    await sleep(300);
    expect(receiver.at(path)).toHaveLength(0);
    expect(await strict.ctx.db.selectFrom('jobs').select('id').where('type', '=', WEBHOOK_DELIVERY_JOB).execute()).toEqual([]);
  });

  it('shows no receiver address in a connection error', async () => {
    // A port nothing listens on: the connection to 127.0.0.1 is refused.
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));

    const owner = await createMember();
    const created = await owner.post('/api/webhooks', { name: 'nobody home', url: `http://localhost:${closedPort}/hook` });
    expect(created.status).toBe(201);
    const webhookId = created.body.data.webhook.id;
    await owner.post(`/api/webhooks/${webhookId}/test`);
    const [delivery] = await settled(owner, webhookId);
    expect(delivery).toMatchObject({ status: 'failed', lastStatus: null, attempts: 4 });
    expect(delivery!.lastError).toBe('Request to the receiver failed (ECONNREFUSED) (gave up after 4 attempts)');
    expect(delivery!.lastError).not.toMatch(/127\.0\.0\.1|::1/);
  });
});

describe('receivers that never answer', () => {
  it("hold up neither another account's deliveries nor file expiry", async () => {
    // Accepts every connection and never answers: each attempt waits out the 10-second time-out.
    const hanging = http.createServer(() => undefined);
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    const hangingUrl = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`;
    let attemptsOnHanging = 0;
    hanging.on('request', () => (attemptsOnHanging += 1));
    const own = await startTestServer({ WEBHOOK_ALLOW_PRIVATE: 'true', UPLOAD_RATE_LIMIT: '0' });
    servers.push(own);
    try {
      const ownAdmin = await signUp(own.baseUrl);
      const stuck = await createMember(own, ownAdmin);
      for (let i = 0; i < 5; i++) expect((await stuck.post('/api/webhooks', { name: `stuck ${i}`, url: `${hangingUrl}/stuck/${i}` })).status).toBe(201);
      // 40 deliveries to receivers that never answer.
      for (let i = 0; i < 8; i++) expect((await uploadFile(stuck, `screenshot-${i}.png`, `bytes ${i}`)).status).toBe(200);
      await waitFor(async () => attemptsOnHanging > 0);

      const other = await createMember(own, ownAdmin);
      const { path } = await createHook(other);
      const uploadedAt = Date.now();
      expect((await uploadFile(other, 'report.txt', 'quarterly numbers')).status).toBe(200);
      const expiresAt = Date.now() + 2000;
      const expiring = await uploadFile(other, 'temporary.txt', 'gone soon', { fields: { expiresAt: new Date(expiresAt).toISOString(), expiryAction: 'DELETE' } });
      expect(expiring.status).toBe(200);

      // Watched together: each is timed from when it is first seen.
      const expired = waitFor(async () => ((await own.ctx.db.selectFrom('files').select('id').where('originalName', '=', 'temporary.txt').executeTakeFirst()) ? null : Date.now()), 60_000);
      // The other account's delivery waits at most for attempts already under way (10 s), not for
      // the stuck account's whole backlog (five rounds of 10 s in eight shared slots).
      const delivered = await waitFor(async () => (receiver.at(path).length > 0 ? Date.now() : null), 60_000);
      expect(delivered - uploadedAt).toBeLessThan(16_000);
      // Expiry runs in slots webhook deliveries never take.
      expect((await expired) - expiresAt).toBeLessThan(3000);
      // The stuck receivers are tried one at a time now, not once per delivery.
      const settledAttempts = attemptsOnHanging;
      await sleep(3000);
      expect(attemptsOnHanging - settledAttempts).toBeLessThanOrEqual(2);
    } finally {
      hanging.closeAllConnections();
      await new Promise<void>((resolve) => hanging.close(() => resolve()));
    }
  }, 90_000);

  it('look at a large backlog to a stalling receiver again spread over the hour, not every 30 s', async () => {
    const hanging = http.createServer(() => undefined);
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    let attemptsOnHanging = 0;
    hanging.on('request', () => (attemptsOnHanging += 1));
    const own = await startTestServer({ WEBHOOK_ALLOW_PRIVATE: 'true' });
    servers.push(own);
    try {
      const owner = await signUp(own.baseUrl);
      const created = await owner.post('/api/webhooks', { name: 'stuck', url: `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/stuck` });
      expect(created.status).toBe(201);
      // One attempt waits out the time-out: the receiver stalls.
      await own.ctx.db.transaction().execute((trx) => emitFileReady(trx, owner.userId, sampleFile(0)));
      await waitFor(async () => attemptsOnHanging > 0);
      await waitFor(async () => ((await deliveries(owner, created.body.data.webhook.id))[0]?.attempts ?? 0) > 0, 20_000);
      // A backlog of 300, each looked at once while the receiver stalls.
      await own.ctx.db.transaction().execute(async (trx) => {
        for (let n = 1; n <= 300; n++) await emitFileReady(trx, owner.userId, sampleFile(n));
      });
      own.ctx.jobs.wake();
      const waiting = () => own.ctx.db.selectFrom('jobs').select(['runAt', 'attempts']).where('type', '=', WEBHOOK_DELIVERY_JOB).execute();
      await waitFor(async () => (await waiting()).filter((j) => j.attempts > 0).length >= 290, 30_000);
      const now = Date.now();
      const runAts = (await waiting()).filter((j) => j.attempts > 0).map((j) => Number(j.runAt) - now);
      // A few of them are looked at again within the next minute: the first turns (30 s on, then a
      // time-out apart, ±20 %) and those sent meanwhile, one at a time, back on the retry schedule;
      // every one of them was before. The rest spread over the hour, the last not before half an hour.
      expect(runAts.filter((ms) => ms < 60_000).length).toBeLessThanOrEqual(30);
      expect(Math.max(...runAts)).toBeGreaterThan(30 * 60_000);
      expect(Math.max(...runAts)).toBeLessThan(75 * 60_000);
    } finally {
      hanging.closeAllConnections();
      await new Promise<void>((resolve) => hanging.close(() => resolve()));
    }
  }, 90_000);
});
