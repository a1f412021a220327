import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp } from '../support/client.ts';

/**
 * The legacy upload credential at rest: the instance must show it again (GET
 * /api/profile/upload-token), so it is kept encrypted with the instance's secret box, never as
 * plaintext; rows written by an older version are encrypted at start-up.
 */
describe('the legacy upload credential at rest', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ UPLOAD_RATE_LIMIT: '0' });
    const admin = await signUp(server.baseUrl);
    await admin.patch('/api/settings', { registration: 'open' });
  });
  afterAll(async () => {
    await server?.close();
  });

  const storedRow = (userId: string) =>
    server.ctx.db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirstOrThrow();

  /** Every column of the account's row, as text, so a plaintext copy is found wherever it is. */
  const rowText = async (userId: string) => JSON.stringify(await storedRow(userId));

  async function worksFor(baseUrl: string, credential: string) {
    const response = await new Client(baseUrl).get('/api/files/tags', { token: credential });
    expect(response.status, response.text).toBe(200);
  }

  it('is stored encrypted when created and when regenerated, shown again, and authenticates', async () => {
    const owner = await signUp(server.baseUrl);
    const created = (await owner.get('/api/profile/upload-token')).body.data.uploadToken as string;
    expect(created.length).toBeGreaterThan(20);
    expect(await rowText(owner.userId)).not.toContain(created);
    expect((await storedRow(owner.userId)).uploadToken).toBeNull();
    expect((await owner.get('/api/profile/upload-token')).body.data.uploadToken).toBe(created);
    await worksFor(server.baseUrl, created);

    const regenerated = (await owner.post('/api/profile/upload-token')).body.data.uploadToken as string;
    expect(regenerated).not.toBe(created);
    const text = await rowText(owner.userId);
    expect(text).not.toContain(regenerated);
    expect(text).not.toContain(created);
    expect((await owner.get('/api/profile/upload-token')).body.data.uploadToken).toBe(regenerated);
    expect((await owner.get('/api/profile/sharex')).text).toContain(regenerated);
    await worksFor(server.baseUrl, regenerated);
    expect((await new Client(server.baseUrl).get('/api/files/tags', { token: created })).status).toBe(401);
  });

  it('encrypts a plaintext credential left by an older version when the instance starts', async () => {
    const owner = await signUp(server.baseUrl);
    // As an older version stored it: the plaintext beside its hash, nothing encrypted.
    const legacy = 'older-version-credential-0123456789abcdef';
    await server.ctx.db
      .updateTable('users')
      .set({ uploadToken: legacy, uploadTokenHash: createHash('sha256').update(legacy).digest('hex'), uploadTokenEncrypted: null })
      .where('id', '=', owner.userId)
      .execute();

    const restarted = await startTestServer({ UPLOAD_RATE_LIMIT: '0' }, { databaseUrl: server.databaseUrl, dataDir: server.dataDir });
    try {
      expect(await rowText(owner.userId)).not.toContain(legacy);
      const browser = new Client(restarted.baseUrl);
      browser.cookies = new Map(owner.cookies);
      expect((await browser.get('/api/profile/upload-token')).body.data.uploadToken).toBe(legacy);
      await worksFor(restarted.baseUrl, legacy);
    } finally {
      await restarted.close();
    }
  });
});
