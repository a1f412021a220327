import yauzl from 'yauzl';
import { beforeAll, describe, expect, it } from 'vitest';
import { PNG_1X1, uploadFile } from '../support/uploads.ts';
import { fileRow } from '../support/file-rows.ts';
import { providers } from '../support/stored-objects.ts';
import { serverOnStorage, type ServerOnStorage } from '../support/server-on-storage.ts';

/**
 * A shared folder's files as one ZIP for its visitors (docs/decisions.md, "Sharing a folder"), on
 * both storage providers: what the page lists and nothing else, each under its subfolder path,
 * names unique without case, stored with a length given before the bytes.
 */
async function entriesOf(zip: Buffer): Promise<Map<string, { bytes: Buffer; compression: number }>> {
  const archive = await new Promise<yauzl.ZipFile>((resolve, reject) => yauzl.fromBuffer(zip, { lazyEntries: true }, (error, file) => (error ? reject(error) : resolve(file!))));
  const entries = new Map<string, { bytes: Buffer; compression: number }>();
  await new Promise<void>((resolve, reject) => {
    archive.on('entry', (entry: yauzl.Entry) => {
      archive.openReadStream(entry, (error, stream) => {
        if (error) return reject(error);
        const chunks: Buffer[] = [];
        stream!.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream!.on('end', () => {
          entries.set(entry.fileName, { bytes: Buffer.concat(chunks), compression: entry.compressionMethod });
          archive.readEntry();
        });
      });
    });
    archive.on('end', resolve);
    archive.on('error', reject);
    archive.readEntry();
  });
  return entries;
}

describe.each(providers)('the ZIP of a shared folder on %s storage', (provider) => {
  const under = serverOnStorage(provider, { UPLOAD_RATE_LIMIT: '0' });
  let server: ServerOnStorage['server'];
  let owner: ServerOnStorage['owner'];
  beforeAll(() => {
    ({ server, owner } = under);
  });

  const folderOf = async (name: string, parentId?: string) => (await owner.post('/api/folders', { name, ...(parentId ? { parentId } : {}) })).body.data.folder.id as string;
  const upload = async (name: string, content: string | Uint8Array, folderId: string, fields: Record<string, string> = {}) => {
    const answer = await uploadFile(owner, name, content, { fields, query: `folderId=${folderId}`, ...(typeof content === 'string' ? {} : { type: 'image/png' }) });
    expect(answer.status, answer.text).toBe(200);
  };
  const download = async (url: string) => {
    const response = await fetch(url);
    return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
  };

  it("holds the page's files under their subfolder paths, stored, with its length; the page offers it", async () => {
    const album = await folderOf('Summer album');
    const day = await folderOf('Day 1', album);
    const climbing = await folderOf('..', day);
    await upload('cover.png', PNG_1X1, album);
    await upload('twin.txt', 'first twin\n', album);
    await upload('TWIN.txt', 'second twin\n', album);
    await upload('morning.txt', 'sun\n', day);
    await upload('up.txt', 'not above\n', climbing);
    await upload('secret.txt', 'private\n', day, { visibility: 'PRIVATE' });
    await upload('locked.txt', 'locked\n', album, { password: 'hunter22' });
    const url = (await owner.put(`/api/folders/${album}/share`, { subfolders: true })).body.data.share.url as string;

    const page = await (await fetch(url)).text();
    expect(page).toContain(`<a class="button" href="${url}/zip" download>Download all (`);
    const zip = await download(`${url}/zip`);
    expect(zip.status).toBe(200);
    expect(zip.headers.get('content-type')).toBe('application/zip');
    expect(zip.headers.get('content-disposition')).toBe("attachment; filename=\"Summer album.zip\"; filename*=UTF-8''Summer%20album.zip");
    expect(zip.headers.get('content-length')).toBe(String(zip.bytes.length));
    expect(zip.headers.get('cache-control')).toBe('no-store');
    // HEAD gives the length a download manager asks for first, and no bytes.
    const head = await fetch(`${url}/zip`, { method: 'HEAD' });
    expect([head.status, head.headers.get('content-length'), (await head.arrayBuffer()).byteLength]).toEqual([200, String(zip.bytes.length), 0]);
    const entries = await entriesOf(zip.bytes);
    // Oldest first; a case-insensitive twin numbered; a folder named ".." climbs nowhere.
    expect([...entries.keys()]).toEqual(['cover.png', 'twin.txt', 'TWIN-1.txt', 'Day 1/morning.txt', 'Day 1/_/up.txt']);
    expect(entries.get('cover.png')!.bytes.equals(Buffer.from(PNG_1X1))).toBe(true);
    expect(entries.get('TWIN-1.txt')!.bytes.toString()).toBe('second twin\n');
    expect(entries.get('Day 1/_/up.txt')!.bytes.toString()).toBe('not above\n');
    expect([...entries.values()].every((entry) => entry.compression === 0)).toBe(true);

    // The folder's own files only, once subfolders are left out.
    expect((await owner.put(`/api/folders/${album}/share`, { subfolders: false })).status).toBe(200);
    expect([...(await entriesOf((await download(`${url}/zip`)).bytes)).keys()]).toEqual(['cover.png', 'twin.txt', 'TWIN-1.txt']);

    // Ended, the address has no ZIP either.
    expect((await owner.delete(`/api/folders/${album}/share`)).status).toBe(204);
    expect((await download(`${url}/zip`)).status).toBe(404);
    expect((await download(`${server.baseUrl}/folder/nothingsharedhere/zip`)).status).toBe(404);
  });

  it('is no ZIP for a folder that lists nothing, nor past 1,000 files, and the page offers none', async () => {
    const empty = await folderOf('Nothing public');
    await upload('only-mine.txt', 'mine\n', empty, { visibility: 'PRIVATE' });
    const emptyUrl = (await owner.put(`/api/folders/${empty}/share`)).body.data.share.url as string;
    expect(await (await fetch(emptyUrl)).text()).not.toContain('Download all');
    expect((await download(`${emptyUrl}/zip`)).status).toBe(404);

    const big = await folderOf('Too many');
    await server.ctx.db
      .insertInto('files')
      .values(Array.from({ length: 1001 }, (_, index) => fileRow(owner.userId, `many${provider}${index}`, { name: `n${index}.txt`, folderId: big })))
      .execute();
    const bigUrl = (await owner.put(`/api/folders/${big}/share`)).body.data.share.url as string;
    expect(await (await fetch(bigUrl)).text()).not.toContain('Download all');
    const refused = await fetch(`${bigUrl}/zip`);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: string }).error).toMatch(/more than 1000 files/);
  });
});
