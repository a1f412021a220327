import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp, uniqueEmail } from '../support/client.ts';
import { createToken } from '../support/uploads.ts';
import { newId } from '../../src/db/ids.ts';

// Reading the audit records (GET /api/audit, audit.read, sessions only) and their retention.

let server: TestServer;
let admin: Awaited<ReturnType<typeof signUp>>;

beforeAll(async () => {
  server = await startTestServer({ AUDIT_RETENTION_DAYS: '30' });
  admin = await signUp(server.baseUrl);
  await admin.patch('/api/settings', { registration: 'open' });
});
afterAll(() => server.close());

const script = () => new Client(server.baseUrl);
const audit = (client: Client, query = '') => client.get(`/api/audit${query}`);

describe('GET /api/audit', () => {
  it("lists token- and legacy-authorized requests newest first, with the account and token, never a secret", async () => {
    const member = await signUp(server.baseUrl, uniqueEmail('audited'));
    const token = await createToken(member, ['files:read', 'urls:read'], { name: 'audited script' });
    const legacy = (await member.get('/api/profile/upload-token')).body.data.uploadToken as string;
    expect((await script().get('/api/files', { token })).status).toBe(200);
    expect((await script().get('/api/urls', { token: legacy })).status).toBe(200);
    expect((await script().get('/api/urls', { token })).status).toBe(200);
    // A browser session's own requests are not recorded.
    expect((await member.get('/api/files')).status).toBe(200);
    await server.ctx.audit.flush();

    const answer = await audit(admin, `?userId=${member.userId}`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('cache-control')).toBe('private, no-store');
    const { records, nextBefore } = answer.body.data;
    expect(nextBefore).toBeNull();
    const tokenId = records[0].token.id as string;
    expect(records).toEqual([
      { id: expect.any(String), at: expect.any(String), user: { id: member.userId, email: member.email }, credential: 'token', token: { id: tokenId, name: 'audited script' }, operation: 'links.read', route: 'GET /api/urls', status: 200, ip: '127.0.0.1' },
      { id: expect.any(String), at: expect.any(String), user: { id: member.userId, email: member.email }, credential: 'legacy', token: null, operation: 'links.read', route: 'GET /api/urls', status: 200, ip: '127.0.0.1' },
      { id: expect.any(String), at: expect.any(String), user: { id: member.userId, email: member.email }, credential: 'token', token: { id: tokenId, name: 'audited script' }, operation: 'files.read', route: 'GET /api/files', status: 200, ip: '127.0.0.1' },
    ]);
    expect(Date.parse(records[0].at)).toBeGreaterThanOrEqual(Date.parse(records[2].at));
    expect(answer.text).not.toContain(token);
    expect(answer.text).not.toContain(legacy);

    // One token's records; a revoked token's records stay, with its name.
    expect((await audit(admin, `?tokenId=${tokenId}`)).body.data.records.map((r: { route: string }) => r.route)).toEqual(['GET /api/urls', 'GET /api/files']);
    expect((await member.delete(`/api/tokens/${tokenId}`)).status).toBe(204);
    expect((await script().get('/api/files', { token })).status).toBe(401);
    await server.ctx.audit.flush();
    expect((await audit(admin, `?tokenId=${tokenId}`)).body.data.records.map((r: { token: unknown }) => r.token)).toEqual([
      { id: tokenId, name: 'audited script' },
      { id: tokenId, name: 'audited script' },
    ]);
  });

  it("keeps every other account's records when an account is deleted before its own are written", async () => {
    const kept = await signUp(server.baseUrl, uniqueEmail('kept'));
    const leaving = await signUp(server.baseUrl, uniqueEmail('leaving'));
    const keptToken = await createToken(kept, ['urls:read']);
    const leavingToken = await createToken(leaving, ['urls:read']);
    // All three wait together for the next write of records (every 250 ms), which comes after the deletion.
    await server.ctx.audit.flush();
    expect((await script().get('/api/urls', { token: keptToken })).status).toBe(200);
    expect((await script().get('/api/urls', { token: leavingToken })).status).toBe(200);
    expect((await script().get('/api/urls', { token: keptToken })).status).toBe(200);
    expect((await admin.delete(`/api/users/${leaving.userId}`)).status).toBe(204);
    await server.ctx.audit.flush();
    expect((await audit(admin, `?userId=${kept.userId}`)).body.data.records.map((r: { route: string }) => r.route)).toEqual(['GET /api/urls', 'GET /api/urls']);
    // The deleted account's record went with it, as its earlier ones did.
    expect((await audit(admin, `?userId=${leaving.userId}`)).body.data.records).toEqual([]);
  });

  it('pages with limit and before, and answers 400 for a bad limit', async () => {
    const member = await signUp(server.baseUrl, uniqueEmail('paged'));
    const token = await createToken(member, ['files:read']);
    for (let i = 0; i < 5; i++) expect((await script().get('/api/files', { token })).status).toBe(200);
    await server.ctx.audit.flush();
    const all = (await audit(admin, `?userId=${member.userId}`)).body.data.records.map((r: { id: string }) => r.id);
    expect(all).toHaveLength(5);
    const first = (await audit(admin, `?userId=${member.userId}&limit=2`)).body.data;
    expect(first.records.map((r: { id: string }) => r.id)).toEqual(all.slice(0, 2));
    const second = (await audit(admin, `?userId=${member.userId}&limit=2&before=${first.nextBefore}`)).body.data;
    expect(second.records.map((r: { id: string }) => r.id)).toEqual(all.slice(2, 4));
    const last = (await audit(admin, `?userId=${member.userId}&limit=2&before=${second.nextBefore}`)).body.data;
    expect(last).toEqual({ records: [expect.objectContaining({ id: all[4] })], nextBefore: null });
    for (const limit of ['0', '101', 'x', '1.5']) {
      const bad = await audit(admin, `?limit=${limit}`);
      expect(bad.status, limit).toBe(400);
      expect(bad.body.success).toBe(false);
    }
    // A cursor that is no record ID is a mistake, not a position: it would list from wherever it sorts.
    for (const before of ['garbage', 'ZZZZZZZZZZZZZZZZZZZZ', `${first.nextBefore}x`]) {
      const bad = await audit(admin, `?before=${before}`);
      expect(bad.status, before).toBe(400);
      expect(bad.body.error, before).toContain("before must be a record ID");
    }
  });

  it('needs a browser session with audit.read: 403 without the permission, 401 for any token', async () => {
    const member = await signUp(server.baseUrl, uniqueEmail('curious'));
    expect((await audit(member)).status).toBe(403);
    const adminToken = await createToken(admin, ['files:read', 'files:upload', 'urls:read', 'urls:write']);
    const adminLegacy = (await admin.get('/api/profile/upload-token')).body.data.uploadToken as string;
    for (const token of [adminToken, adminLegacy]) {
      const answer = await script().get('/api/audit', { token });
      expect(answer.status).toBe(401);
    }
    expect((await script().get('/api/audit')).status).toBe(401);
  });
});

describe('audit retention', () => {
  it('removes records older than AUDIT_RETENTION_DAYS and keeps the rest', async () => {
    const member = await signUp(server.baseUrl, uniqueEmail('old'));
    const day = 86_400_000;
    const record = (ageDays: number) => ({ id: newId(), userId: member.userId, tokenId: null, credential: 'legacy' as const, operation: 'files.read', route: 'GET /api/files', status: 200, ip: null, createdAt: Date.now() - ageDays * day });
    await server.ctx.db.insertInto('auditEvents').values([record(31), record(45), record(29), record(1)]).execute();
    await server.ctx.db.updateTable('jobs').set({ runAt: Date.now() - 1000 }).where('dedupeKey', '=', 'audit-prune').execute();
    await server.jobs.runDueJobs();
    await expect
      .poll(async () => (await server.ctx.db.selectFrom('auditEvents').select('createdAt').where('userId', '=', member.userId).execute()).length, { timeout: 10_000 })
      .toBe(2);
    const kept = await server.ctx.db.selectFrom('auditEvents').select('createdAt').where('userId', '=', member.userId).execute();
    for (const { createdAt } of kept) expect(Date.now() - Number(createdAt)).toBeLessThan(30 * day);
    // The next prune is a day away.
    const next = await server.ctx.db.selectFrom('jobs').select('runAt').where('dedupeKey', '=', 'audit-prune').executeTakeFirstOrThrow();
    expect(Number(next.runAt)).toBeGreaterThan(Date.now() + day - 60_000);
  });

  it('keeps everything with AUDIT_RETENTION_DAYS=0', async () => {
    const keeping = await startTestServer({ AUDIT_RETENTION_DAYS: '0' });
    try {
      expect(await keeping.ctx.db.selectFrom('jobs').select('id').where('dedupeKey', '=', 'audit-prune').execute()).toEqual([]);
    } finally {
      await keeping.close();
    }
  });
});
