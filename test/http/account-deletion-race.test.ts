import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp } from '../support/client.ts';
import { createToken, uploadFile } from '../support/uploads.ts';
import { providers, storageUnderTest, type StorageUnderTest } from '../support/stored-objects.ts';

/**
 * An administrator deletes an account while its uploads are being committed. Each upload either
 * lands before the deletion (and goes with the account) or finds no account (the generic 401, not a
 * 500); and every byte stored for the account either has its record or a cleanup job that removes
 * it: none stays behind without either.
 */
describe.each(providers)('deleting an account while it uploads, on %s storage', (provider) => {
  let storage: StorageUnderTest;
  let server: TestServer;
  let admin: Awaited<ReturnType<typeof signUp>>;

  beforeAll(async () => {
    storage = await storageUnderTest(provider);
    server = await startTestServer({ ...storage.env, UPLOAD_RATE_LIMIT: '0' });
    admin = await signUp(server.baseUrl);
    expect((await admin.patch('/api/settings', { registration: 'open' })).status).toBe(200);
  });
  afterAll(async () => {
    await server?.close();
    await storage?.stop();
  });

  it('answers every upload 200 or 401 and leaves no stored byte without its record or its cleanup', { timeout: 120_000 }, async () => {
    const statuses = new Map<number, number>();
    for (let round = 0; round < 8; round++) {
      const member = await signUp(server.baseUrl);
      const token = await createToken(member, ['files:upload']);
      const script = new Client(server.baseUrl);
      let deleted = false;
      // Eight uploaders, each sending small files one after another until the account is gone.
      const uploaders = Array.from({ length: 8 }, async (_, worker) => {
        for (let i = 0; ; i++) {
          const answer = await uploadFile(script, `w${worker}-${i}.txt`, `upload ${worker} ${i}`, { token });
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
          expect([200, 401], answer.text).toContain(answer.status);
          if (answer.status === 401 && deleted) return;
        }
      });
      await new Promise((resolve) => setTimeout(resolve, 100 + round * 20));
      const deletion = await admin.delete(`/api/users/${member.userId}`);
      expect(deletion.status, deletion.text).toBe(204);
      deleted = true;
      await Promise.all(uploaders);

      // The jobs before the objects: a cleanup job removes its object before its own row, so an object
      // still listed afterwards whose job was not there before has none. Read the other way round, a
      // job finishing between the two reads left its object listed and its row gone.
      const jobs = await server.ctx.db.selectFrom('jobs').select('payload').where('type', '=', 'storage.cleanup').execute();
      const cleaned = new Set(jobs.map((job) => (JSON.parse(job.payload) as { storageKey: string }).storageKey));
      const keys = await storage.keys(server.dataDir, `files/${member.userId}/`);
      expect(keys.filter((key) => !cleaned.has(key)), `round ${round}`).toEqual([]);
    }
    expect(statuses.get(200) ?? 0).toBeGreaterThan(0);
  });
});
