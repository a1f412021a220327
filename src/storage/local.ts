import { createHash, randomBytes } from 'node:crypto';
import { constants, createReadStream } from 'node:fs';
import { lstat, mkdir, open, readdir, readFile, rename, rm, unlink, writeFile, type FileHandle } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { StorageLimitError, StorageNotFoundError, StoragePartError, StorageUploadGoneError } from './storage.ts';
import type { ByteRange, PartInfo, PutOptions, Storage, StoredObject } from './storage.ts';
import { FileSink } from './file-sink.ts';

/**
 * Parts of a multipart upload that arrive in order (part 1, then 2, …, one at a time, as a client
 * uploading sequentially sends them) are appended to one file, `assembly`, in the upload's
 * directory; an empty marker file `<n>.<etag>@<offset>+<size>` records each such part. Completing
 * then renames that file into place instead of copying every byte a second time. Parts that arrive
 * out of order, concurrently, or again are stored as `<n>.<etag>` files as before, and completion
 * copies whatever is not already assembled. `append.lock` (created exclusively) admits one writer of
 * the assembly at a time, across processes; one left behind by a crash only disables the shortcut.
 */
const ASSEMBLY = 'assembly';
const APPEND_LOCK = 'append.lock';
/** Copies read in 1 MiB chunks (the default 64 KiB costs a round trip per chunk). */
const COPY_CHUNK = 1024 * 1024;

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
    let size = 0;
    await this.#writeThenMove(dest, async (handle) => {
      const sink = new FileSink(handle, { maxBytes: options.maxBytes, onData: options.onData });
      await pipeline(body, sink);
      size = sink.bytes;
    });
    return { size };
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
    const md5 = createHash('md5');
    const sinkOptions = { maxBytes, expectedBytes: contentLength, onData: (chunk: Buffer) => void md5.update(chunk) };

    const appended = await this.#appendPart(dir, partNumber, body, sinkOptions, md5);
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

  /**
   * Appends part n to the assembly when parts 1…n-1, and only they, are assembled back to back and
   * no other writer holds the assembly; otherwise returns null without reading the body.
   */
  async #appendPart(
    dir: string,
    partNumber: number,
    body: Readable,
    sinkOptions: { maxBytes: number | undefined; expectedBytes: number | undefined; onData: (chunk: Buffer) => void },
    md5: ReturnType<typeof createHash>,
  ): Promise<{ etag: string; size: number } | null> {
    const release = await takeAppendLock(dir);
    if (!release) return null;
    try {
      const offset = assembledLength(parseParts(await readdir(dir)), partNumber);
      if (offset === null) return null;
      const handle = await open(join(dir, ASSEMBLY), constants.O_RDWR | constants.O_CREAT);
      let sink: FileSink;
      try {
        // Bytes past the assembled parts are left over from an append that failed: overwrite them.
        await handle.truncate(offset);
        sink = new FileSink(handle, { ...sinkOptions, position: offset });
      } catch (err) {
        await handle.close();
        throw err;
      }
      await pipeline(body, sink);
      const etag = md5.digest('hex');
      // The sink made the bytes durable; the marker makes them part n.
      const name = assembledPartName(partNumber, etag, offset, sink.bytes);
      await writeFile(join(dir, name), '');
      await fsyncDir(dir);
      await dropOtherVersions(dir, partNumber, name);
      return { etag, size: sink.bytes };
    } finally {
      await release();
    }
  }

  async completeMultipart(key: string, uploadId: string, parts: PartInfo[]): Promise<{ size: number }> {
    const dest = this.#pathOf(key);
    const dir = await this.#openUpload(key, uploadId);
    const sources = readPartSources(dir, parts, parseParts(await readdir(dir)));
    // A completion that died after moving the assembly into place left only its markers behind.
    if (sources.some((source) => source.kind === 'assembled') && !(await exists(join(dir, ASSEMBLY)))) throw new StorageUploadGoneError(uploadId);
    const assembledPrefix = await this.#completeFromAssembly(dest, dir, sources);
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

  /**
   * When the completion starts with parts that are assembled in order from the first byte, and the
   * assembly holds nothing else, the rest is appended to it and it becomes the object (no copy of
   * the assembled bytes). Returns the object's size, or null when the general path must copy.
   */
  async #completeFromAssembly(dest: string, dir: string, sources: PartSource[]): Promise<number | null> {
    const release = await takeAppendLock(dir);
    if (!release) return null;
    let moved = false;
    try {
      // Read again under the lock: an append may have finished since.
      const present = parseParts(await readdir(dir));
      let prefixEnd = 0;
      let prefixParts = 0;
      for (const source of sources) {
        if (source.kind !== 'assembled' || source.offset !== prefixEnd || !present.some((p) => p.name === source.name)) break;
        prefixEnd += source.size;
        prefixParts += 1;
      }
      // Appending truncates the assembly after the prefix, which must not cut into another part.
      if (prefixParts === 0 || present.some((p) => p.kind === 'assembled' && p.offset + p.size > prefixEnd)) return null;
      const assembly = join(dir, ASSEMBLY);
      const handle = await open(assembly, 'r+');
      let sink: FileSink;
      try {
        await handle.truncate(prefixEnd);
        sink = new FileSink(handle, { position: prefixEnd });
      } catch (err) {
        await handle.close();
        throw err;
      }
      // Ends with fsync, like every write here (the assembled parts were synced as they came).
      await pipeline(concatenated(dir, sources.slice(prefixParts)), sink);
      await this.#moveIntoPlace(assembly, dest);
      moved = true;
      return prefixEnd + sink.bytes;
    } finally {
      // Once moved, the directory (and the lock in it) is removed by the caller.
      if (!moved) await release();
    }
  }

  async abortMultipart(_key: string, uploadId: string): Promise<void> {
    await rm(this.#uploadDir(uploadId), { recursive: true, force: true });
  }

  async close(): Promise<void> {}

  /** Writes to a temp file, makes it durable, then renames it over dest; leaves no temp behind. */
  async #writeThenMove(dest: string, write: (handle: FileHandle) => Promise<void>): Promise<void> {
    await mkdir(this.#tmpDir, { recursive: true });
    const tmp = join(this.#tmpDir, `${randomId()}.tmp`);
    try {
      // Opened before streaming starts, so a cleanup after an early failure cannot race the file's
      // creation. The writer (a FileSink) fsyncs and closes it, so a rename never exposes lost bytes.
      await write(await open(tmp, 'wx'));
      await this.#moveIntoPlace(tmp, dest);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }

  /** Renames a durable file over dest and makes the rename (and any new directories) durable. */
  async #moveIntoPlace(file: string, dest: string): Promise<void> {
    const parent = dirname(dest);
    const firstCreated = await mkdir(parent, { recursive: true });
    await rename(file, dest);
    // Newly created directories need their own entries made durable in their parents too.
    const stop = firstCreated === undefined ? parent : dirname(firstCreated);
    for (let dir = parent; ; dir = dirname(dir)) {
      await fsyncDir(dir);
      if (dir === stop) break;
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
      throw isCode(err, 'ENOENT') ? new StorageUploadGoneError(uploadId, { cause: err }) : err;
    });
    if (storedKey !== key) throw new Error(`Multipart upload ${uploadId} belongs to another key`);
    return dir;
  }
}

/** A stored version of a part: its own file, or a marker for bytes in the assembly. */
type StoredPartEntry =
  | { kind: 'file'; name: string; partNumber: number; etag: string }
  | { kind: 'assembled'; name: string; partNumber: number; etag: string; offset: number; size: number };

type PartSource = { kind: 'file'; path: string } | { kind: 'assembled'; name: string; offset: number; size: number };

function parseParts(names: string[]): StoredPartEntry[] {
  const entries: StoredPartEntry[] = [];
  for (const name of names) {
    const assembled = /^(\d+)\.([^.@]+)@(\d+)\+(\d+)$/.exec(name);
    if (assembled) {
      entries.push({ kind: 'assembled', name, partNumber: Number(assembled[1]), etag: assembled[2]!, offset: Number(assembled[3]), size: Number(assembled[4]) });
      continue;
    }
    const file = /^(\d+)\.([^.@]+)$/.exec(name);
    if (file) entries.push({ kind: 'file', name, partNumber: Number(file[1]), etag: file[2]! });
  }
  return entries;
}

/**
 * Where part n would be appended: the end of parts 1…n-1 when they are all assembled back to back
 * from the first byte and nothing from n on is; otherwise null (the part gets its own file).
 */
function assembledLength(present: StoredPartEntry[], partNumber: number): number | null {
  const assembled = new Map<number, StoredPartEntry & { kind: 'assembled' }>();
  for (const entry of present) {
    if (entry.kind !== 'assembled') continue;
    if (entry.partNumber >= partNumber || assembled.has(entry.partNumber)) return null;
    assembled.set(entry.partNumber, entry);
  }
  let end = 0;
  for (let n = 1; n < partNumber; n++) {
    const entry = assembled.get(n);
    if (!entry || entry.offset !== end) return null;
    end += entry.size;
  }
  return end;
}

/** Resolves each requested part to where its bytes are, failing with a precise reason before any copying. */
function readPartSources(dir: string, parts: PartInfo[], present: StoredPartEntry[]): PartSource[] {
  if (parts.length === 0) throw new StoragePartError('A multipart upload needs at least one part');
  return parts.map((part, index) => {
    checkPartNumber(part.partNumber);
    const previous = parts[index - 1];
    if (previous && previous.partNumber >= part.partNumber) {
      throw new StoragePartError('Parts must be sorted by part number and unique');
    }
    const etag = normalizeEtag(part.etag);
    const versions = present.filter((entry) => entry.partNumber === part.partNumber);
    const match = versions.find((entry) => entry.etag === etag);
    if (match) return match.kind === 'file' ? { kind: 'file', path: join(dir, match.name) } : { kind: 'assembled', name: match.name, offset: match.offset, size: match.size };
    throw new StoragePartError(
      versions[0]
        ? `Part ${part.partNumber} has ETag ${versions[0].etag}, not ${part.etag}`
        : `Part ${part.partNumber} was never uploaded`,
    );
  });
}

/** The bytes of `sources` in order: part files whole, assembled parts as ranges of the assembly. */
async function* concatenated(dir: string, sources: PartSource[]): AsyncGenerator<Buffer> {
  for (const source of sources) {
    if (source.kind === 'assembled' && source.size === 0) continue;
    const stream =
      source.kind === 'file'
        ? createReadStream(source.path, { highWaterMark: COPY_CHUNK })
        : createReadStream(join(dir, ASSEMBLY), { start: source.offset, end: source.offset + source.size - 1, highWaterMark: COPY_CHUNK });
    yield* stream as AsyncIterable<Buffer>;
  }
}

/** Admits one writer of the assembly; null when another holds it (or one crashed holding it). */
async function takeAppendLock(dir: string): Promise<(() => Promise<void>) | null> {
  const lock = join(dir, APPEND_LOCK);
  try {
    await (await open(lock, 'wx')).close();
  } catch (err) {
    if (isCode(err, 'EEXIST')) return null;
    throw err;
  }
  return () => rm(lock, { force: true });
}

/** Drops earlier versions of a part, so completing with their ETag fails, as on S3. */
async function dropOtherVersions(dir: string, partNumber: number, keep: string): Promise<void> {
  for (const file of await readdir(dir)) {
    if (file.startsWith(`${partNumber}.`) && file !== keep) await rm(join(dir, file), { force: true });
  }
}

function assembledPartName(partNumber: number, etag: string, offset: number, size: number): string {
  return `${partNumber}.${etag}@${offset}+${size}`;
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

async function fsyncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function exists(path: string): Promise<boolean> {
  return Boolean(await lstat(path).catch(() => null));
}

function randomId(): string {
  return randomBytes(16).toString('hex');
}

function isCode(err: unknown, ...codes: string[]): boolean {
  return err instanceof Error && codes.includes((err as NodeJS.ErrnoException).code ?? '');
}
