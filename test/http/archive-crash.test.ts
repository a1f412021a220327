/**
 * A server killed (SIGKILL) while it extracts an archive and while it writes a new one (contract §9,
 * under the atomicity of contract §7): every file that was committed is whole, nothing without a
 * record stays in storage once the safety nets have run, and the quota charge is the files' sum.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { serverProcess } from '../support/server-process.ts';
import { signUp } from '../support/client.ts';
import { uploadFile } from '../support/uploads.ts';
import { providers, storageUnderTest, type StorageUnderTest } from '../support/stored-objects.ts';
import { zipBytes } from '../support/archives.ts';

const MiB = 1024 * 1024;
const HOUR = 3600_000;
const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

describe.each(providers)('a server killed during archive work (%s storage)', (provider) => {
  let storage: StorageUnderTest;
  beforeAll(async () => {
    storage = await storageUnderTest(provider);
  });
  afterAll(async () => {
    await storage?.stop();
  });

  it('keeps every committed file whole and leaves no byte without a record', { timeout: 180_000 }, async () => {
    const dying = await serverProcess({ UPLOAD_RATE_LIMIT: '0', ...storage.env }, 'hoard-archive-crash-');
    const { baseUrl, databaseUrl, dataDir } = dying;
    let restarted: TestServer | undefined;
    try {
      await dying.start();
      const owner = await signUp(baseUrl);
      // 48 stored entries of 2 MiB of random bytes: long enough to be killed in the middle.
      const entries = Array.from({ length: 48 }, (_, i) => ({ name: `part-${String(i).padStart(2, '0')}.bin`, data: randomBytes(2 * MiB), compress: false }));
      const digests = new Map(entries.map((e) => [e.name, sha(e.data)]));
      const uploaded = await uploadFile(owner, 'big.zip', await zipBytes(entries), { type: 'application/zip' });
      expect(uploaded.status, uploaded.text).toBe(200);
      const archiveId = (uploaded.body.data.downloadUrl as string).split('/').at(-2)!;

      // Extraction, and the creation of a ZIP holding the archive, run at once; the process dies once
      // a few entries are committed.
      const extraction = owner.post(`/api/archives/${archiveId}/extract`, {}).catch(() => null);
      const creation = owner.post('/api/archives', { fileIds: [archiveId], name: 'copy' }).catch(() => null);
      const committed = async () => Number((await fetch(`${baseUrl}/api/files?limit=1`, { headers: { cookie: owner.cookieHeader() } }).then((r) => r.json() as Promise<{ pagination: { total: number } }>)).pagination.total);
      await vi.waitFor(async () => expect(await committed()).toBeGreaterThan(4), { timeout: 60_000, interval: 20 });
      await dying.kill();
      expect(await extraction).toBeNull();
      await creation;

      // Another process starts on the same database and storage; time passes and the safety nets run.
      restarted = await startTestServer({ ...storage.env, UPLOAD_RATE_LIMIT: '0' }, { databaseUrl, dataDir });
      const server = restarted;
      const past = Date.now() - 2 * HOUR;
      await server.ctx.db.updateTable('jobs').set({ runAt: past }).where('type', 'in', ['storage.cleanup', 'storage.tmpSweep']).execute();
      for (const file of walk(path.join(dataDir, 'tmp'))) fs.utimesSync(file, past / 1000, past / 1000);
      await server.jobs.runDueJobs();

      await vi.waitFor(
        async () => {
          const files = await server.ctx.db.selectFrom('files').select(['id', 'name', 'storageKey', 'size']).where('userId', '=', owner.userId).execute();
          expect((await storage.keys(dataDir, `files/${owner.userId}/`)).sort()).toEqual(files.map((f) => f.storageKey).sort());
          const user = await server.ctx.db.selectFrom('users').select('usedBytes').where('id', '=', owner.userId).executeTakeFirstOrThrow();
          expect(Number(user.usedBytes)).toBe(files.reduce((sum, f) => sum + Number(f.size), 0));
          // Local temporary files are swept; on S3 the new ZIP's multipart upload, begun and never
          // completed, is aborted by its safety net, which recorded its ID as it began.
          expect(await storage.leftovers(dataDir)).toEqual([]);
        },
        { timeout: 20_000, interval: 200 },
      );
      // Every extracted file that was committed has its entry's exact bytes.
      const extracted = await server.ctx.db.selectFrom('files').select(['name', 'storageKey']).where('userId', '=', owner.userId).where('name', 'like', 'part-%').execute();
      expect(extracted.length).toBeGreaterThan(2);
      expect(extracted.length).toBeLessThan(entries.length);
      for (const file of extracted) {
        const object = await server.ctx.storage.get(file.storageKey);
        const chunks: Buffer[] = [];
        for await (const chunk of object.stream) chunks.push(chunk as Buffer);
        expect(sha(Buffer.concat(chunks)), file.name).toBe(digests.get(file.name));
      }
    } finally {
      dying.stop();
      await restarted?.close();
      // About 200 MiB of archive and extracted files per run.
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

function walk(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? walk(full) : [full];
  });
}
