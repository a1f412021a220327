import type { Hash } from 'node:crypto';
import { constants, createReadStream } from 'node:fs';
import { lstat, open, readdir, rm, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { StoragePartError, type PartInfo } from './storage.ts';
import { FileSink } from './file-sink.ts';
import { fsyncDir, isCode } from './local-fs.ts';

// How the local-disk storage (local.ts) keeps the parts of a multipart upload, in their own files or
// in the assembly described below.

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

/**
 * Appends part n to the assembly when parts 1…n-1, and only they, are assembled back to back and
 * no other writer holds the assembly; otherwise returns null without reading the body.
 */
export async function appendInOrder(
  dir: string,
  partNumber: number,
  body: Readable,
  sinkOptions: { maxBytes: number | undefined; expectedBytes: number | undefined; onData: (chunk: Buffer) => void },
  md5: Hash,
): Promise<{ etag: string; size: number } | null> {
  const release = await takeAppendLock(dir);
  if (!release) return null;
  try {
    const offset = assembledLength(parseParts(await readdir(dir)), partNumber);
    if (offset === null) return null;
    const handle = await open(join(dir, ASSEMBLY), constants.O_RDWR | constants.O_CREAT);
    let sink: FileSink;
    try {
      // Bytes past the assembled parts are left over from an append a crash cut short: overwrite them.
      await handle.truncate(offset);
      sink = new FileSink(handle, { ...sinkOptions, position: offset });
    } catch (err) {
      await handle.close();
      throw err;
    }
    await writeOrCutBack(body, sink, join(dir, ASSEMBLY), offset);
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

/**
 * Writes `body` into the assembly through `sink`; should that fail, the assembly is cut back to
 * `length`, its size before. Bytes of a write that failed are nothing, and they would hold their
 * space until the next append, which may never come: a part refused because the disk filled up
 * would keep it full until the session expired. The caller holds the append lock, so no other
 * writer is past `length`.
 */
async function writeOrCutBack(body: Readable | AsyncIterable<Buffer>, sink: FileSink, assembly: string, length: number): Promise<void> {
  try {
    await pipeline(body, sink);
  } catch (err) {
    await truncate(assembly, length).catch(() => undefined);
    throw err;
  }
}

/**
 * When the completion starts with parts that are assembled in order from the first byte, and the
 * assembly holds nothing else, the rest is appended to it and it becomes the object (no copy of
 * the assembled bytes); `moveIntoPlace` makes it the object. Returns the object's size, or null when
 * the general path must copy.
 */
export async function completeFromAssembly(dir: string, sources: PartSource[], moveIntoPlace: (file: string) => Promise<void>): Promise<number | null> {
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
    // The later parts stay in their own files should the copy fail.
    await writeOrCutBack(concatenated(dir, sources.slice(prefixParts)), sink, assembly, prefixEnd);
    await moveIntoPlace(assembly);
    moved = true;
    return prefixEnd + sink.bytes;
  } finally {
    // Once moved, the directory (and the lock in it) is removed by the caller.
    if (!moved) await release();
  }
}

/** Whether a completion that died after moving the assembly into place left only its markers behind. */
export async function assemblyLost(dir: string, sources: PartSource[]): Promise<boolean> {
  return sources.some((source) => source.kind === 'assembled') && !(await exists(join(dir, ASSEMBLY)));
}

/** A stored version of a part: its own file, or a marker for bytes in the assembly. */
export type StoredPartEntry =
  | { kind: 'file'; name: string; partNumber: number; etag: string }
  | { kind: 'assembled'; name: string; partNumber: number; etag: string; offset: number; size: number };

export type PartSource = { kind: 'file'; path: string } | { kind: 'assembled'; name: string; offset: number; size: number };

export function parseParts(names: string[]): StoredPartEntry[] {
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
export function readPartSources(dir: string, parts: PartInfo[], present: StoredPartEntry[]): PartSource[] {
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
export async function* concatenated(dir: string, sources: PartSource[]): AsyncGenerator<Buffer> {
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
export async function dropOtherVersions(dir: string, partNumber: number, keep: string): Promise<void> {
  for (const file of await readdir(dir)) {
    if (file.startsWith(`${partNumber}.`) && file !== keep) await rm(join(dir, file), { force: true });
  }
}

function assembledPartName(partNumber: number, etag: string, offset: number, size: number): string {
  return `${partNumber}.${etag}@${offset}+${size}`;
}

export function partFileName(partNumber: number, etag: string): string {
  return `${partNumber}.${etag}`;
}

/** ETags are bare lowercase hex here; clients often echo the quoted HTTP header form. */
function normalizeEtag(etag: string): string {
  return etag.replaceAll('"', '').toLowerCase();
}

export function checkPartNumber(partNumber: number): void {
  if (!Number.isInteger(partNumber) || partNumber < 1 || partNumber > 10_000) {
    throw new StoragePartError(`Invalid part number ${partNumber}`);
  }
}

async function exists(path: string): Promise<boolean> {
  return Boolean(await lstat(path).catch(() => null));
}
