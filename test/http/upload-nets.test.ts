import { describe, expect, it } from 'vitest';
import { serverOnStorage } from '../support/server-on-storage.ts';
import { providers } from '../support/stored-objects.ts';
import { createToken, heldUpload, uploadFile } from '../support/uploads.ts';
import { CleanupNet } from '../../src/jobs/storage-cleanup.ts';

// Every upload lays a crash net before its first byte: the removal of its bytes, 5 minutes ahead,
// pushed back while the upload lives. It comes due only for an upload that stood still that long,
// and one that then goes on to commit must not make a record of bytes the net is removing or has
// removed (docs/decisions.md, "A net that ran before its commit"). Here another process's job runner
// is played by writing its claim into the net's job row while the upload arrives.
describe.each(providers)('a crash net that came due while its upload still arrived, on %s storage', (provider) => {
  const under = serverOnStorage(provider);
  const netsOf = (userId: string) =>
    under.server.ctx.db.selectFrom('jobs').selectAll().where('type', '=', 'storage.cleanup').where('dedupeKey', 'like', `storage-cleanup:files/${userId}/%`);

  it('refuses the commit with 503 when a process has claimed the net or the net has run, keeping neither a record nor bytes', async () => {
    const { server, owner, storage } = under;
    const token = await createToken(owner, ['files:upload']);
    const db = server.ctx.db;
    const claimed = (id: string) => db.updateTable('jobs').set({ leasedBy: 'another-process:claim:', leasedUntil: Date.now() + 60_000, attempts: 1 }).where('id', '=', id).execute();
    const ran = (id: string) => db.deleteFrom('jobs').where('id', '=', id).execute();
    for (const [what, act] of [['claimed', claimed], ['ran', ran]] as const) {
      const held = heldUpload(server.baseUrl, token);
      await held.begun;
      await expect.poll(async () => (await netsOf(owner.userId).execute()).length, { message: what }).toBe(1);
      const [net] = await netsOf(owner.userId).execute();
      await act(net!.id);
      held.release();
      const answer = await held.answer;
      expect([answer.status, await answer.json()], what).toEqual([
        503,
        { error: 'This upload waited too long for its record (more than 5 minutes) and its bytes were taken for abandoned; upload it again' },
      ]);
      expect(answer.headers.get('retry-after')).toBe('5');
      // The refused upload removed its bytes and its net.
      expect(await netsOf(owner.userId).execute(), what).toEqual([]);
    }
    expect(await db.selectFrom('files').select('id').where('userId', '=', owner.userId).execute()).toEqual([]);
    expect(Number((await db.selectFrom('users').select('usedBytes').where('id', '=', owner.userId).executeTakeFirstOrThrow()).usedBytes)).toBe(0);
    expect(await storage.keys(server.dataDir, `files/${owner.userId}/`)).toEqual([]);

    // An upload whose net nobody touched commits as ever, and takes its net with it.
    const kept = await uploadFile(owner, 'kept.txt', 'kept bytes');
    expect(kept.status, kept.text).toBe(200);
    expect(await netsOf(owner.userId).execute()).toEqual([]);
    expect(await storage.keys(server.dataDir, `files/${owner.userId}/`)).toHaveLength(1);
  });

  it('a push-back moves only a net no process has claimed, and never lays one again', async () => {
    const { server, owner } = under;
    const db = server.ctx.db;
    const key = `files/${owner.userId}/pushed-back`;
    const row = () => db.selectFrom('jobs').selectAll().where('dedupeKey', '=', `storage-cleanup:${key}`).executeTakeFirst();
    const net = new CleanupNet(server.ctx, key);
    await net.arm();
    const due = Date.now() - 1;
    await db.updateTable('jobs').set({ runAt: due, leasedBy: 'another-process:claim:', leasedUntil: Date.now() + 60_000 }).where('dedupeKey', '=', `storage-cleanup:${key}`).execute();
    // Naming a multipart upload pushes the net back at once.
    net.multipart('upload-1');
    await net.settled();
    expect(await row()).toMatchObject({ runAt: due, leasedBy: 'another-process:claim:', payload: JSON.stringify({ storageKey: key }) });

    await db.updateTable('jobs').set({ leasedBy: null, leasedUntil: null }).where('dedupeKey', '=', `storage-cleanup:${key}`).execute();
    net.multipart('upload-2');
    await net.settled();
    const moved = await row();
    expect(Number(moved!.runAt)).toBeGreaterThan(Date.now() + 4 * 60_000);
    expect(JSON.parse(moved!.payload)).toEqual({ storageKey: key, multipartUploadId: 'upload-2' });

    await db.deleteFrom('jobs').where('dedupeKey', '=', `storage-cleanup:${key}`).execute();
    net.multipart('upload-3');
    await net.settled();
    expect(await row()).toBeUndefined();
  });
});
