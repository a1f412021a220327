import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp } from '../support/client.ts';
import { createToken, uploadFile } from '../support/uploads.ts';

/**
 * Webhooks deleted while uploads are being committed: the upload's file.ready deliveries go to the
 * webhooks that still exist, and the upload itself never fails for it (it was a 409 on PostgreSQL,
 * the deliveries' foreign key broken by a webhook deleted between the commit's read and its insert).
 */
describe('deleting webhooks while files are uploaded', () => {
  let server: TestServer;
  let owner: Awaited<ReturnType<typeof signUp>>;

  beforeAll(async () => {
    server = await startTestServer({ UPLOAD_RATE_LIMIT: '0', WEBHOOK_ALLOW_PRIVATE: 'true' });
    owner = await signUp(server.baseUrl);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('answers every upload 200, and no delivery names a deleted webhook', { timeout: 120_000 }, async () => {
    const token = await createToken(owner, ['files:upload']);
    const script = new Client(server.baseUrl);
    for (let round = 0; round < 30; round++) {
      const webhooks: string[] = [];
      for (let i = 0; i < 5; i++) {
        const created = await owner.post('/api/webhooks', { name: `hook ${round}-${i}`, url: 'http://127.0.0.1:9/hook' });
        expect(created.status, created.text).toBe(201);
        webhooks.push(created.body.data.webhook.id);
      }
      const uploads = Array.from({ length: 20 }, (_, i) => uploadFile(script, `r${round}-${i}.txt`, `round ${round} file ${i}`, { token }));
      // Spread over the time the uploads take to arrive and commit.
      const deletions = webhooks.map(async (id, i) => {
        await new Promise((resolve) => setTimeout(resolve, 5 + i * 8));
        return owner.delete(`/api/webhooks/${id}`);
      });
      for (const answer of await Promise.all(uploads)) expect(answer.status, answer.text).toBe(200);
      for (const answer of await Promise.all(deletions)) expect(answer.status, answer.text).toBe(204);
    }
    expect(await server.ctx.db.selectFrom('webhookDeliveries').select('id').execute()).toEqual([]);
  });
});
