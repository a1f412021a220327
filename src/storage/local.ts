import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  ByteCounter,
  StorageLimitError,
  StorageNotFoundError,
  StoragePartError,
} from './storage.ts';
import type { ByteRange, PartInfo, PutOptions, Storage, StoredObject } from './storage.ts';

export class LocalStorage implements Storage {
  readonly kind = 'local';
  readonly target: string;
  readonly #root: string;
  readonly #tmpDir: string;

  constructor(options: { root: string; tmpDir: string }) {
    this.#root = resolve(options.root);
    this.#tmpDir = resolve(options.tmpDir);
    this.target = `local:${this.#root}`;
  }

  async put(key: string, body: Readable, options: PutOptions = {}): Promise<{ size: number }> {
    const dest = this.#pathOf(key);
    const counter = new ByteCounter({ maxBytes: options.maxBytes });
    await this.#writeThenMove(dest, (out) => pipeline(body, counter, out));
    return { size: counter.bytes };
  }

  async get(key: string, range?: ByteRange): Promise<StoredObject> {
    const path = this.#pathOf(key);
    // One handle for both stat and read, so size and bytes come from the same file even if the
    // key is replaced or deleted concurrently.
    const handle = await open(path, 'r').catch((err: unknown) => {
      throw isCode(err, 'ENOENT', 'ENOTDIR') ? new StorageNotFoundError(key) : err;
    });
    try {
      const stats = await handle.stat();
      if (!stats.isFile()) throw new StorageNotFoundError(key);
      if (range) checkRange(range, stats.size);
      return { stream: handle.createReadStream(range ?? {}), size: stats.size };
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  async stat(key: string): Promise<{ size: number } | null> {
    try {
      const handle = await open(this.#pathOf(key), 'r');
      try {
        const stats = await handle.stat();
        return stats.isFile() ? { size: stats.size } : null;
      } finally {
        await handle.close();
      }
    } catch (err) {
      if (isCode(err, 'ENOENT', 'ENOTDIR')) return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await unlink(this.#pathOf(key)).catch((err: unknown) => {
      if (!isCode(err, 'ENOENT', 'ENOTDIR')) throw err;
    });
  }

  async createMultipart(key: string): Promise<{ uploadId: string }> {
    this.#pathOf(key);
    const uploadId = randomId();
    const dir = this.#uploadDir(uploadId);
    await mkdir(dir, { recursive: true });
    // Remembering the key lets later calls refuse a mismatched key, as S3 does.
    await writeFile(join(dir, 'key'), key);
    return { uploadId };
  }

  async presignPart(): Promise<string | null> {
    return null;
  }

  async uploadPart(
    key: string,
    uploadId: string,
    partNumber: number,
    body: Readable,
    options: { maxBytes?: number; contentLength?: number } = {},
  ): Promise<{ etag: string; size: number }> {
    checkPartNumber(partNumber);
    const dir = await this.#openUpload(key, uploadId);
    const { maxBytes, contentLength } = options;
    if (maxBytes !== undefined && contentLength !== undefined && contentLength > maxBytes) {
      body.destroy();
      throw new StorageLimitError(maxBytes);
    }
    const counter = new ByteCounter({ maxBytes, expectedBytes: contentLength });
    const md5 = createHash('md5');
    const hasher = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        md5.update(chunk);
        callback(null, chunk);
      },
    });
    const tmp = join(dir, `tmp-${randomId()}`);
    try {
      await pipeline(body, counter, hasher, await createTempFile(tmp));
      const etag = md5.digest('hex');
      // The ETag is part of the file name, so a part and its ETag are replaced in one rename.
      const name = partFileName(partNumber, etag);
      await rename(tmp, join(dir, name));
      await fsyncDir(dir);
      // Drop earlier versions of this part so completing with their ETag fails, as on S3.
      for (const file of await readdir(dir)) {
        if (file.startsWith(`${partNumber}.`) && file !== name) await rm(join(dir, file), { force: true });
      }
      return { etag, size: counter.bytes };
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }

  async completeMultipart(key: string, uploadId: string, parts: PartInfo[]): Promise<{ size: number }> {
    const dest = this.#pathOf(key);
    const dir = await this.#openUpload(key, uploadId);
    const files = await readPartFiles(dir, parts);
    let size = 0;
    async function* concatenated(): AsyncGenerator<Buffer> {
      for (const file of files) {
        for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
          size += chunk.length;
          yield chunk;
        }
      }
    }
    await this.#writeThenMove(dest, (out) => pipeline(Readable.from(concatenated()), out));
    await rm(dir, { recursive: true, force: true });
    return { size };
  }

  async abortMultipart(_key: string, uploadId: string): Promise<void> {
    await rm(this.#uploadDir(uploadId), { recursive: true, force: true });
  }

  async close(): Promise<void> {}

  /** Writes to a temp file, makes it durable, then renames it over dest; leaves no temp behind. */
  async #writeThenMove(dest: string, write: (out: NodeJS.WritableStream) => Promise<void>): Promise<void> {
    await mkdir(this.#tmpDir, { recursive: true });
    const tmp = join(this.#tmpDir, `${randomId()}.tmp`);
    try {
      await write(await createTempFile(tmp));
      const parent = dirname(dest);
      const firstCreated = await mkdir(parent, { recursive: true });
      await rename(tmp, dest);
      // Newly created directories need their own entries made durable in their parents too.
      const stop = firstCreated === undefined ? parent : dirname(firstCreated);
      for (let dir = parent; ; dir = dirname(dir)) {
        await fsyncDir(dir);
        if (dir === stop) break;
      }
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }

  #pathOf(key: string): string {
    const segments = key.split('/');
    if (
      key.includes('\0') ||
      key.includes('..') ||
      isAbsolute(key) ||
      segments.some((segment) => segment === '' || segment === '.')
    ) {
      throw new Error(`Invalid storage key: ${JSON.stringify(key)}`);
    }
    const path = resolve(this.#root, key);
    if (!path.startsWith(this.#root + sep)) throw new Error(`Invalid storage key: ${JSON.stringify(key)}`);
    return path;
  }

  #uploadDir(uploadId: string): string {
    if (!/^[a-z0-9]{1,64}$/.test(uploadId)) throw new Error(`Invalid upload id: ${JSON.stringify(uploadId)}`);
    return join(this.#tmpDir, 'multipart', uploadId);
  }

  async #openUpload(key: string, uploadId: string): Promise<string> {
    const dir = this.#uploadDir(uploadId);
    const storedKey = await readFile(join(dir, 'key'), 'utf8').catch((err: unknown) => {
      throw isCode(err, 'ENOENT') ? new Error(`No multipart upload ${uploadId}`) : err;
    });
    if (storedKey !== key) throw new Error(`Multipart upload ${uploadId} belongs to another key`);
    return dir;
  }
}

/** Resolves each requested part to its file, failing with a precise reason before any copying. */
async function readPartFiles(dir: string, parts: PartInfo[]): Promise<string[]> {
  if (parts.length === 0) throw new StoragePartError('A multipart upload needs at least one part');
  const present = new Set(await readdir(dir));
  return parts.map((part, index) => {
    checkPartNumber(part.partNumber);
    const previous = parts[index - 1];
    if (previous && previous.partNumber >= part.partNumber) {
      throw new StoragePartError('Parts must be sorted by part number and unique');
    }
    const name = partFileName(part.partNumber, normalizeEtag(part.etag));
    if (present.has(name)) return join(dir, name);
    const stored = [...present].find((file) => file.startsWith(`${part.partNumber}.`));
    throw new StoragePartError(
      stored
        ? `Part ${part.partNumber} has ETag ${stored.slice(stored.indexOf('.') + 1)}, not ${part.etag}`
        : `Part ${part.partNumber} was never uploaded`,
    );
  });
}

function partFileName(partNumber: number, etag: string): string {
  return `${partNumber}.${etag}`;
}

/** ETags are bare lowercase hex here; clients often echo the quoted HTTP header form. */
function normalizeEtag(etag: string): string {
  return etag.replaceAll('"', '').toLowerCase();
}

function checkPartNumber(partNumber: number): void {
  if (!Number.isInteger(partNumber) || partNumber < 1 || partNumber > 10_000) {
    throw new StoragePartError(`Invalid part number ${partNumber}`);
  }
}

function checkRange({ start, end }: ByteRange, size: number): void {
  if (!Number.isInteger(start) || !Number.isInteger(end) || start < 0 || end < start || start >= size) {
    throw new RangeError(`Range ${start}-${end} is not satisfiable for ${size} bytes`);
  }
}

/**
 * Opened before streaming starts, so a cleanup after an early failure cannot race the file's
 * creation; flush makes the stream fsync before it closes, so a rename never exposes lost bytes.
 */
async function createTempFile(path: string): Promise<NodeJS.WritableStream> {
  const handle = await open(path, 'wx');
  return handle.createWriteStream({ flush: true });
}

async function fsyncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function randomId(): string {
  return randomBytes(16).toString('hex');
}

function isCode(err: unknown, ...codes: string[]): boolean {
  return err instanceof Error && codes.includes((err as NodeJS.ErrnoException).code ?? '');
}
