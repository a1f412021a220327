import { createHash, randomBytes } from 'node:crypto';
import { closeSync, fsync, openSync, rmSync, writeSync } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, unlink, writeFile, type FileHandle } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { promisify } from 'node:util';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { StorageLimitError, StorageNotFoundError, StorageUploadGoneError } from './storage.ts';
import type { ByteRange, PartInfo, PutOptions, Storage, StoredObject } from './storage.ts';
import { FileSink } from './file-sink.ts';
import { fsyncDir, isCode } from './local-fs.ts';
import {
  appendInOrder,
  assemblyLost,
  checkPartNumber,
  completeFromAssembly,
  concatenated,
  dropOtherVersions,
  parseParts,
  partFileName,
  readPartSources,
} from './local-assembly.ts';

/**
 * Objects are files under the root, written atomically (docs/architecture.md; createBlocking() is
 * the one exception, for new keys that no record points to yet). Multipart uploads keep
 * their parts in a directory of the temporary directory; parts that arrive in order are appended to
 * one assembly file instead (src/storage/local-assembly.ts).
 */
export class LocalStorage implements Storage {
  readonly kind = 'local';
  readonly target: string;
  readonly #root: string;
  readonly #tmpDir: string;
  /**
   * Directories this process made or found, so a put does not ask for them again (two calls
   * through the thread pool per object). Nothing of Hoard removes them; should someone, the rename
   * into one fails with ENOENT and the directory is made again.
   */
  readonly #knownDirs = new Set<string>();

  constructor(options: { root: string; tmpDir: string }) {
    this.#root = resolve(options.root);
    this.#tmpDir = resolve(options.tmpDir);
    this.target = `local:${this.#root}`;
  }

  async put(key: string, body: Readable, options: PutOptions = {}): Promise<{ size: number }> {
    const dest = this.#pathOf(key);
    let size = 0;
    await this.#writeThenMove(
      dest,
      async (handle) => {
        const sink = new FileSink(handle, { maxBytes: options.maxBytes, onData: options.onData });
        await pipeline(body, sink);
        size = sink.bytes;
      },
      options.deferNameSync === true,
    );
    return { size };
  }

  /**
   * Creates the object at a new `key` from bytes already in memory: written, fsynced and closed in
   * place, its name left to syncNames(); EEXIST if the key exists. Not atomic, unlike put(): a crash
   * can leave part of the bytes at the key. Only for keys no record points to yet and that a crash
   * net will remove unless a record comes (an import's slots, src/uploads/store-upload.ts): there, a
   * temporary file and its rename are a journal entry more per file for nothing.
   *
   * Every file system call but the fsync, which waits for the disk, is made synchronously: only for a
   * thread that does nothing else meanwhile (an import's storing thread, for the files it reads in
   * one go). There an asynchronous call is a round trip through the thread pool that costs more
   * than the call itself (docs/decisions.md, "Importing a library").
   */
  async createBlocking(key: string, bytes: Uint8Array): Promise<void> {
    const path = this.#pathOf(key);
    const parent = dirname(path);
    let created = this.#knownDirs.has(parent) ? undefined : await this.#makeDir(parent);
    let fd: number;
    try {
      fd = openSync(path, 'wx');
    } catch (err) {
      if (!isCode(err, 'ENOENT') || created !== undefined) throw err;
      // A known directory removed behind this process's back: made again.
      created = await this.#makeDir(parent);
      fd = openSync(path, 'wx');
    }
    try {
      try {
        for (let written = 0; written < bytes.length; ) written += writeSync(fd, bytes, written);
        await fsyncAsync(fd);
      } finally {
        closeSync(fd);
      }
      await this.#syncNewDirs(parent, created, { parent: false });
    } catch (err) {
      rmSync(path, { force: true });
      throw err;
    }
  }

  async syncNames(keys: readonly string[]): Promise<void> {
    // Each directory once, however many of the names it holds (directories made by those puts were
    // made durable in their parents by the puts themselves).
    for (const dir of new Set(keys.map((key) => dirname(this.#pathOf(key))))) await fsyncDir(dir);
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
      return { stream: handle.createReadStream(range ?? wholeFile(stats.size)), size: stats.size };
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

  async localPath(key: string): Promise<string> {
    if ((await this.stat(key)) === null) throw new StorageNotFoundError(key);
    return this.#pathOf(key);
  }

  /**
   * Removes the object, durably: its directory is fsynced before this resolves, also when the file
   * was gone already (a removal made just before by a process that then died). The job that removes
   * bytes deletes its own row next; had the power failed before the disk kept the unlink, the bytes
   * came back with no record and no job left to remove them.
   */
  async delete(key: string): Promise<void> {
    const path = this.#pathOf(key);
    await unlink(path).catch((err: unknown) => {
      if (!isCode(err, 'ENOENT', 'ENOTDIR')) throw err;
    });
    await fsyncDir(dirname(path)).catch((err: unknown) => {
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
    const md5 = createHash('md5');
    const sinkOptions = { maxBytes, expectedBytes: contentLength, onData: (chunk: Buffer) => void md5.update(chunk) };

    const appended = await appendInOrder(dir, partNumber, body, sinkOptions, md5);
    if (appended) return appended;

    const tmp = join(dir, `tmp-${randomId()}`);
    try {
      const sink = new FileSink(await open(tmp, 'wx'), sinkOptions);
      await pipeline(body, sink);
      const etag = md5.digest('hex');
      // The ETag is part of the file name, so a part and its ETag are replaced in one rename.
      const name = partFileName(partNumber, etag);
      await rename(tmp, join(dir, name));
      await fsyncDir(dir);
      await dropOtherVersions(dir, partNumber, name);
      return { etag, size: sink.bytes };
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }

  async completeMultipart(key: string, uploadId: string, parts: PartInfo[]): Promise<{ size: number }> {
    const dest = this.#pathOf(key);
    const dir = await this.#openUpload(key, uploadId);
    const sources = readPartSources(dir, parts, parseParts(await readdir(dir)));
    // A completion that died after moving the assembly into place left only its markers behind.
    if (await assemblyLost(dir, sources)) throw new StorageUploadGoneError(uploadId);
    const assembledPrefix = await completeFromAssembly(dir, sources, (file) => this.#moveIntoPlace(file, dest));
    if (assembledPrefix !== null) {
      await rm(dir, { recursive: true, force: true });
      return { size: assembledPrefix };
    }
    let size = 0;
    await this.#writeThenMove(dest, async (handle) => {
      const sink = new FileSink(handle);
      await pipeline(concatenated(dir, sources), sink);
      size = sink.bytes;
    });
    await rm(dir, { recursive: true, force: true });
    return { size };
  }

  async abortMultipart(_key: string, uploadId: string): Promise<void> {
    await rm(this.#uploadDir(uploadId), { recursive: true, force: true });
  }

  async close(): Promise<void> {}

  /** Writes to a temp file, makes it durable, then renames it over dest; leaves no temp behind. */
  async #writeThenMove(dest: string, write: (handle: FileHandle) => Promise<void>, deferNameSync = false): Promise<void> {
    const tmp = join(this.#tmpDir, `${randomId()}.tmp`);
    try {
      // Opened before streaming starts, so a cleanup after an early failure cannot race the file's
      // creation. The writer (a FileSink) fsyncs and closes it, so a rename never exposes lost bytes.
      await write(await this.#openTemporary(tmp));
      await this.#moveIntoPlace(tmp, dest, deferNameSync);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }

  async #openTemporary(tmp: string): Promise<FileHandle> {
    if (!this.#knownDirs.has(this.#tmpDir)) await this.#makeDir(this.#tmpDir);
    try {
      return await open(tmp, 'wx');
    } catch (err) {
      if (!isCode(err, 'ENOENT')) throw err;
      // Removed behind this process's back: made again.
      await this.#makeDir(this.#tmpDir);
      return await open(tmp, 'wx');
    }
  }

  /**
   * Renames a durable file over dest and makes the rename (and any new directories) durable; with
   * `deferNameSync`, the rename's own directory is left to syncNames().
   */
  async #moveIntoPlace(file: string, dest: string, deferNameSync = false): Promise<void> {
    const parent = dirname(dest);
    let created = this.#knownDirs.has(parent) ? undefined : await this.#makeDir(parent);
    try {
      await rename(file, dest);
    } catch (err) {
      if (!isCode(err, 'ENOENT') || created !== undefined) throw err;
      // A known directory removed behind this process's back: made again.
      created = await this.#makeDir(parent);
      await rename(file, dest);
    }
    await this.#syncNewDirs(parent, created, { parent: !deferNameSync });
  }

  /**
   * Makes a new name in `parent` durable (unless `parent` is false: syncNames() will) and, should
   * directories have been made for it (`created`, the first one made), their own entries in their
   * parents too.
   */
  async #syncNewDirs(parent: string, created: string | null | undefined, sync: { parent: boolean }): Promise<void> {
    const stop = created === undefined || created === null ? parent : dirname(created);
    for (let dir = parent; ; dir = dirname(dir)) {
      if (dir !== parent || sync.parent) await fsyncDir(dir);
      if (dir === stop) break;
    }
  }

  /** Makes `dir` (and its parents) if needed: the first directory made, or null when it existed. */
  async #makeDir(dir: string): Promise<string | null> {
    const first = await mkdir(dir, { recursive: true });
    this.#knownDirs.add(dir);
    return first ?? null;
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
      throw isCode(err, 'ENOENT') ? new StorageUploadGoneError(uploadId, { cause: err }) : err;
    });
    if (storedKey !== key) throw new Error(`Multipart upload ${uploadId} belongs to another key`);
    return dir;
  }
}

function checkRange({ start, end }: ByteRange, size: number): void {
  if (!Number.isInteger(start) || !Number.isInteger(end) || start < 0 || end < start || start >= size) {
    throw new RangeError(`Range ${start}-${end} is not satisfiable for ${size} bytes`);
  }
}

const fsyncAsync = promisify(fsync);

function randomId(): string {
  return randomBytes(16).toString('hex');
}

/**
 * The whole of a stored file of `size` bytes as a read range. Stored files never change, so the
 * stream may stop at the size: each read then allocates only what is left (not 64 KiB for a 10 KiB
 * file), and no last read is made only to meet the end. Serving a 10 KiB file at 32 connections:
 * 3,246–3,347 → 3,512–3,547 req/s, 299–308 → 277–282 µs of CPU a request.
 */
function wholeFile(size: number): { start?: number; end?: number } {
  return size > 0 ? { start: 0, end: size - 1 } : {};
}
