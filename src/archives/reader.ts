import { once } from 'node:events';
import { PassThrough, pipeline, Readable, Transform, type TransformCallback } from 'node:stream';
import { crc32, createGunzip } from 'node:zlib';
import yauzl from 'yauzl';
import tar from 'tar-stream';
import { StorageNotFoundError, StorageUnavailableError, type Storage } from '../storage/storage.ts';
import { archiveLimits } from '../api/vocabulary.ts';
import { nameFromBytes } from '../shared/naming.ts';

/**
 * Reading archives where they are stored (contract §9): ZIP (ZIP64 included) through `yauzl` over
 * ranged reads of the Storage interface, so on S3 only the central directory and the entries asked
 * for are fetched; tar and tar.gz streamed through `tar-stream`. Nothing loads a whole archive or
 * entry into memory.
 */

/** At most this many entries are listed in a manifest (contract §9); the counts cover them all. */
export const MANIFEST_ENTRY_LIMIT: number = archiveLimits.manifestEntries;

export interface ArchiveEntry {
  /** As stored, `\` turned into `/`, a directory's trailing `/` removed. */
  path: string;
  size: number;
  /** The stored size in a ZIP; `size` in a tar. */
  compressedSize: number;
  directory: boolean;
  modifiedAt: string | null;
  encrypted: boolean;
  /**
   * A tar entry that is neither a file nor a directory (a link, a device, a FIFO): listed and
   * counted as an entry of no bytes, never extracted. Not part of the API's manifest shape.
   */
  special?: TarSpecial;
}

/** The tar entry types that hold no file's bytes of their own. */
export type TarSpecial = 'symlink' | 'link' | 'character-device' | 'block-device' | 'fifo';

/**
 * The largest size an entry may declare and be listed: sizes are exact numbers in JSON for a
 * JavaScript client only up to 2^53 − 1 bytes (8 PiB). A ZIP64 field can declare up to 2^64.
 */
const LARGEST_DECLARED_SIZE = Number.MAX_SAFE_INTEGER;

/**
 * An entry's modification time; null when it has none or its header's field holds no time (a tar
 * header whose checksum is right may still hold digits that are not octal, or a base-256 number past
 * any date, or before year 0 or after 9999): the entry is listed and extracted all the same, as `tar`
 * lists it with a warning.
 */
function timeOf(date: Date | undefined | null): string | null {
  // Outside years 0 to 9999 an ISO instant needs an expanded year (+011476-…), which RFC 3339
  // readers refuse: no archive was written then either.
  if (!date || !Number.isFinite(date.getTime())) return null;
  const year = date.getUTCFullYear();
  return year >= 0 && year <= 9999 ? date.toISOString() : null;
}

/** A tar header's entry: the ArchiveEntry fields it gives; null for a header that is no entry. */
function tarEntryOf(header: tar.Header): ArchiveEntry | null {
  const common = { path: tarPath(header.name), compressedSize: 0, modifiedAt: timeOf(header.mtime), encrypted: false };
  switch (header.type) {
    case 'file':
    case 'contiguous-file': {
      const size = header.size ?? 0;
      return { ...common, size, compressedSize: size, directory: false };
    }
    case 'directory':
      return { ...common, size: 0, directory: true };
    case 'symlink':
    case 'link':
    case 'character-device':
    case 'block-device':
    case 'fifo':
      return { ...common, size: 0, directory: false, special: header.type };
    default:
      // Metadata of the entries around it (pax and GNU long-name headers), which the parser reads.
      return null;
  }
}

export interface ArchiveManifest {
  format: 'zip' | 'tar';
  entryCount: number;
  /** The uncompressed sizes of the file entries, all of them. */
  totalSize: number;
  truncated: boolean;
  entries: ArchiveEntry[];
}

export type ArchiveKind = 'zip' | 'tar' | 'tar.gz';

/** Not an archive this reader can read (a 400 for the routes). */
export class NotAnArchiveError extends Error {}

/**
 * One entry cannot be read (a damaged local header, an unknown compression method…) while the rest
 * of the archive may well be: extraction skips it, the entry route answers 400.
 */
export class DamagedEntryError extends NotAnArchiveError {}

/** What an entry's data was found to be as it was read, in the words extraction's `skipped` uses. */
export const entryDataProblems = {
  inflates: 'its data inflates past its declared size',
  sizeMismatch: 'its data does not match its declared size',
  damaged: 'its data is damaged and cannot be decompressed',
  checksum: 'its data does not match its CRC-32 checksum',
} as const;

/** A ZIP entry's bytes, read whole, do not give the CRC-32 its central directory records. */
class ChecksumMismatch extends Error {}

/** What is wrong with an entry whose stream failed with `error`; null when the failure is not its data's. */
export function entryDataProblem(error: unknown): string | null {
  if (error instanceof ChecksumMismatch) return entryDataProblems.checksum;
  const message = error instanceof Error ? error.message : '';
  // yauzl's size validation (validateEntrySizes): the deflated data does not end where declared.
  if (/too many bytes in the stream/.test(message)) return entryDataProblems.inflates;
  if (/not enough bytes in the stream/.test(message)) return entryDataProblems.sizeMismatch;
  if (typeof (error as { code?: unknown })?.code === 'string' && (error as { code: string }).code.startsWith('Z_')) return entryDataProblems.damaged;
  return null;
}

/**
 * `stream` once its first bytes have come (or it ended): an entry whose data fails before that is a
 * DamagedEntryError, which an answer not yet begun can still give as a 400. Damage found further on
 * can only cut the answer short.
 */
async function begun(stream: Readable): Promise<Readable> {
  const chunks = stream[Symbol.asyncIterator]();
  let first: IteratorResult<Buffer>;
  try {
    first = (await chunks.next()) as IteratorResult<Buffer>;
  } catch (error) {
    const problem = entryDataProblem(error);
    if (problem === null) throw error;
    throw new DamagedEntryError(`The entry cannot be read: ${problem}`);
  }
  // The rest as it comes. Destroying this stream ends the generator, whose `finally` ends the
  // iteration of `stream`, which destroys it (and the stored read beneath it).
  return Readable.from(
    (async function* () {
      try {
        if (first.done) return;
        yield first.value;
        for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield next.value as Buffer;
      } finally {
        await chunks.return?.();
      }
    })(),
    { objectMode: false },
  );
}

/** A ZIP entry's bytes; what yauzl finds wrong with the entry itself is a DamagedEntryError. */
function openZipEntry(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Readable> {
  return new Promise<Readable>((resolve, reject) =>
    zip.openReadStream(entry, (error, opened) => {
      // Storage failing under the read (the archive deleted meanwhile, a store not answering) is
      // storage's, answered as such: taken for the entry's damage, it was a 400 whose message gave
      // the stored object's key away.
      if (error instanceof StorageNotFoundError || error instanceof StorageUnavailableError) return reject(error);
      // A header that points past the end of the file: storage's words for it are not the client's.
      if (error) return reject(new DamagedEntryError(`The entry cannot be read: ${/not satisfiable/i.test(error.message) ? 'it lies past the end of the file' : error.message}`));
      // yauzl reports a damaged entry's data by emitting 'error' on the stream (a tick later)
      // without destroying it, so the stream is left neither ended nor errored: a reader that
      // attaches after that moment (storage's write opens its file first) would wait for ever, and
      // with none attached the error would fall to the process. Destroying it with the error keeps
      // it, for whoever reads it later, as a stream's own error.
      opened.on('error', (error: Error) => {
        if (!opened.destroyed) opened.destroy(error);
      });
      // The checked bytes; either side's failure or early end destroys both.
      resolve(pipeline(opened, new Crc32Check(entry.crc32), () => {}));
    }),
  );
}

/**
 * An entry's bytes as they pass, checked against the CRC-32 the central directory records, which
 * yauzl does not check: an entry whose stored or deflated bytes changed after it was written (a
 * flipped bit on a disk, a tampered archive) inflates or copies without complaint, and was extracted
 * and served as if whole. A mismatch fails the stream at its end, so extraction skips the entry and
 * keeps none of its bytes. The last chunk is held back until the check, so that an answer with the
 * entry's bytes never arrives whole when they are wrong: a small entry is a 400 before any byte
 * (begun), a large one is cut short.
 */
class Crc32Check extends Transform {
  readonly #expected: number;
  #crc = 0;
  #held: Buffer | null = null;

  constructor(expected: number) {
    super();
    this.#expected = expected >>> 0;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.#crc = crc32(chunk, this.#crc);
    const previous = this.#held;
    this.#held = chunk;
    callback(null, previous ?? undefined);
  }

  override _flush(callback: TransformCallback): void {
    if (this.#crc >>> 0 !== this.#expected) return callback(new ChecksumMismatch('CRC-32 mismatch'));
    callback(null, this.#held ?? undefined);
  }
}

async function head(storage: Storage, key: string, size: number, bytes: number): Promise<Buffer> {
  if (size === 0) return Buffer.alloc(0);
  const { stream } = await storage.get(key, { start: 0, end: Math.min(size, bytes) - 1 });
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** What an object is, from its first bytes (a tar's `ustar` magic sits at offset 257). */
export async function archiveKind(storage: Storage, key: string, size: number): Promise<ArchiveKind> {
  const start = await head(storage, key, size, 512);
  if (start.length >= 4 && start[0] === 0x50 && start[1] === 0x4b && (start[2] === 0x03 || start[2] === 0x05) && (start[3] === 0x04 || start[3] === 0x06)) return 'zip';
  if (start.length >= 2 && start[0] === 0x1f && start[1] === 0x8b) return 'tar.gz';
  if (start.length >= 262 && start.subarray(257, 262).toString('latin1') === 'ustar') return 'tar';
  // An empty tar is its end marker alone: zero blocks of 512 bytes, at least two.
  if (size >= 1024 && size % 512 === 0 && start.length === 512 && start.every((byte) => byte === 0)) return 'tar';
  throw new NotAnArchiveError('The file is not a ZIP or tar archive');
}

/** The block a ZIP's small reads come from, and the largest read that is answered from it. */
const READ_AHEAD_BYTES = 64 * 1024;
const SMALL_READ_BYTES = READ_AHEAD_BYTES / 4;
/** Reads answered from the block between two turns of the event loop (see StorageReader.read). */
const READS_PER_TURN = 64;

/** yauzl's random access over the object's ranged reads. */
class StorageReader extends yauzl.RandomAccessReader {
  private readonly storage: Storage;
  private readonly key: string;
  private readonly size: number;
  private block: { start: number; bytes: Buffer } | null = null;
  /** Reads answered from the block so far. */
  private answered = 0;
  constructor(storage: Storage, key: string, size: number) {
    super();
    this.storage = storage;
    this.key = key;
    this.size = size;
  }

  /**
   * yauzl reads the central directory in two small reads per entry (20,000 for a 10,000-entry
   * archive: seconds on local disk, a request each on S3, a stream each); those are answered from
   * a block read ahead of them instead, so the directory comes in a few ranged reads. Larger reads
   * (entry data) stream as before; at most one block is held.
   */
  override read(buffer: Buffer, offset: number, length: number, position: number, callback: (error: Error | null) => void): void {
    const end = position + length;
    if (length > SMALL_READ_BYTES || end > this.size) return super.read(buffer, offset, length, position, callback);
    const held = this.block;
    if (held && position >= held.start && end <= held.start + held.bytes.length) {
      held.bytes.copy(buffer, offset, position - held.start, end - held.start);
      // Answered after the current operation, as yauzl expects, but a turn of the event loop only
      // every READS_PER_TURN reads: a turn for each (20,000 for 10,000 entries) made up a third of a
      // manifest's time (10,000 entries: 157–197 → 90–129 ms), and yielding every 32 entries or so
      // still lets other requests through while a large directory is read.
      if (++this.answered % READS_PER_TURN === 0) setImmediate(callback, null);
      else process.nextTick(callback, null);
      return;
    }
    this.readBlock(position).then(
      (block) => {
        if (end > block.start + block.bytes.length) return setImmediate(callback, new Error('unexpected EOF'));
        this.block = block;
        block.bytes.copy(buffer, offset, position - block.start, end - block.start);
        setImmediate(callback, null);
      },
      (error: unknown) => setImmediate(callback, error as Error),
    );
  }

  private async readBlock(start: number): Promise<{ start: number; bytes: Buffer }> {
    const { stream } = await this.storage.get(this.key, { start, end: Math.min(this.size, start + READ_AHEAD_BYTES) - 1 });
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return { start, bytes: Buffer.concat(chunks) };
  }
  override _readStreamForRange(start: number, end: number): Readable {
    const out = new PassThrough();
    // yauzl's end is exclusive; the Storage interface's is inclusive.
    if (end <= start) {
      out.end();
      return out;
    }
    this.storage.get(this.key, { start, end: end - 1 }).then(
      ({ stream }) => {
        // pipeline, not pipe: when the reader of `out` goes away (a client cut off), the stored
        // read is destroyed too, rather than left open with its file handle or connection.
        if (out.destroyed) stream.destroy();
        else pipeline(stream, out, () => undefined);
      },
      (error: unknown) => out.destroy(error as Error),
    );
    return out;
  }
}

async function openZip(storage: Storage, key: string, size: number): Promise<yauzl.ZipFile> {
  try {
    // decodeStrings off: yauzl would refuse the `../` and absolute names the manifest must show as stored.
    return await yauzl.fromRandomAccessReaderPromise(new StorageReader(storage, key, size), size, { lazyEntries: true, decodeStrings: false, validateEntrySizes: true, autoClose: true });
  } catch (error) {
    throw storeFailure(error) ?? new NotAnArchiveError(`The ZIP file cannot be read: ${(error as Error).message}`);
  }
}

/**
 * A failure of the store under an archive being read, not of the archive: a store that stopped in
 * the middle of the bytes (503), bytes gone since the read began (404). Both were "cannot be read"
 * (400), the latter naming the storage key.
 */
function storeFailure(error: unknown): Error | null {
  return error instanceof StorageUnavailableError || error instanceof StorageNotFoundError ? error : null;
}

function zipPath(entry: yauzl.Entry): { path: string; directory: boolean } {
  const name = yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, entry.fileNameRaw, entry.extraFields, false).replaceAll('\\', '/');
  const directory = name.endsWith('/');
  return { path: directory ? name.replace(/\/+$/, '') : name, directory };
}

/** Every entry of a ZIP, one at a time, from its central directory. */
async function* zipEntries(zip: yauzl.ZipFile): AsyncGenerator<yauzl.Entry> {
  const next = () =>
    new Promise<yauzl.Entry | null>((resolve, reject) => {
      const onEntry = (entry: yauzl.Entry) => done(() => resolve(entry));
      const onEnd = () => done(() => resolve(null));
      const onError = (error: Error) => done(() => reject(storeFailure(error) ?? new NotAnArchiveError(`The ZIP file cannot be read: ${error.message}`)));
      const done = (then: () => void) => {
        zip.off('entry', onEntry).off('end', onEnd).off('error', onError);
        then();
      };
      zip.on('entry', onEntry).on('end', onEnd).on('error', onError);
      zip.readEntry();
    });
  try {
    for (let entry = await next(); entry; entry = await next()) yield entry;
  } finally {
    zip.close();
  }
}

function manifestCollector(format: 'zip' | 'tar', limit: number) {
  const manifest: ArchiveManifest = { format, entryCount: 0, totalSize: 0, truncated: false, entries: [] };
  return {
    manifest,
    add(entry: ArchiveEntry) {
      // Only a ZIP can declare such sizes (a tar entry's bytes follow its header, within the file).
      if (entry.size > LARGEST_DECLARED_SIZE || entry.compressedSize > LARGEST_DECLARED_SIZE) {
        throw new NotAnArchiveError(`The ZIP file cannot be read: its entry "${entry.path}" declares more than ${LARGEST_DECLARED_SIZE} bytes`);
      }
      manifest.entryCount += 1;
      if (!entry.directory) manifest.totalSize += entry.size;
      if (manifest.totalSize > LARGEST_DECLARED_SIZE) throw new NotAnArchiveError(`The ZIP file cannot be read: its entries declare more than ${LARGEST_DECLARED_SIZE} bytes in all`);
      if (manifest.entries.length < limit) manifest.entries.push(entry);
      else manifest.truncated = true;
    },
  };
}

type TarEntry = AsyncIterable<Buffer>;
const noBytes: TarEntry = { [Symbol.asyncIterator]: async function* () {} };

/** Streams a tar (or tar.gz) object, calling `onEntry` for each header; it must consume the entry. */
async function walkTar(storage: Storage, key: string, gzipped: boolean, onEntry: (header: tar.Header, entry: TarEntry) => Promise<'continue' | 'stop'>): Promise<void> {
  const { stream } = await storage.get(key);
  // Names come as Latin-1 text, the bytes unchanged, and are read again by tarName. (tar-stream has
  // this option; its published types do not list it.)
  const options: Parameters<typeof tar.extract>[0] & { filenameEncoding: string } = { filenameEncoding: 'latin1' };
  const extract = tar.extract(options);
  // Each stage's failure ends the walk: `pipe` passes on no error, and one that no stage listened
  // for (the stored object's stream destroyed by an abort, behind gunzip) would end the process.
  const gunzip = gzipped ? createGunzip() : null;
  for (const stage of gunzip ? [stream, gunzip] : [stream]) stage.on('error', (error) => extract.destroy(error));
  (gunzip ? stream.pipe(gunzip) : stream).pipe(extract as unknown as NodeJS.WritableStream);
  // What the walk itself throws is the archive's fault, and so is what reading an entry throws
  // (tarChunks makes that a NotAnArchiveError); anything else onEntry throws (a database or
  // storage failure) goes on as it is.
  let visiting = false;
  try {
    for await (const entry of extract) {
      // A base-256 size field can be negative (its first byte 0xff), which tar-stream reads as it is
      // (all 0xff as -0): the entry's stream ended at once, an empty file was made of it, and the
      // next header was looked for inside its bytes.
      const declared = entry.header.size ?? 0;
      if (!Number.isSafeInteger(declared) || declared < 0 || Object.is(declared, -0)) throw new NotAnArchiveError('The tar file cannot be read: an entry declares a negative size');
      visiting = true;
      // tar-stream never feeds a directory's stream (the format says to ignore its size), and ends it
      // only when its size is 0: one that declares a size would be waited on for ever.
      const bytes = entry.header.type === 'directory' ? noBytes : (entry as unknown as TarEntry);
      const decision = await onEntry({ ...entry.header, name: tarName(entry.header) }, bytes);
      visiting = false;
      if (decision === 'stop') break;
    }
  } catch (error) {
    if (visiting || error instanceof NotAnArchiveError) throw error;
    throw storeFailure(error) ?? new NotAnArchiveError(`The tar file cannot be read: ${(error as Error).message}`);
  } finally {
    stream.destroy();
    gunzip?.destroy();
  }
}

/** A tar entry's bytes; a failure of the archive's stream while they are read is the archive's. */
async function* tarChunks(entry: TarEntry): AsyncGenerator<Buffer> {
  try {
    for await (const chunk of entry) yield chunk;
  } catch (error) {
    throw storeFailure(error) ?? new NotAnArchiveError(`The tar file cannot be read: ${(error as Error).message}`);
  }
}

async function drain(entry: TarEntry): Promise<void> {
  for await (const _chunk of tarChunks(entry));
}

/**
 * An entry's name. A pax header's path is UTF-8 text by definition; a ustar or GNU name is bytes,
 * which an older system may have written in Latin-1 (nameFromBytes).
 */
function tarName(header: tar.Header): string {
  const pax = header.pax as { path?: string } | null | undefined;
  return pax?.path !== undefined ? header.name : nameFromBytes(Buffer.from(header.name, 'latin1'));
}

const tarPath = (name: string) => name.replaceAll('\\', '/').replace(/\/+$/, '');

/**
 * A ZIP entry's modification time, from its MS-DOS date and time; null when they hold no time (a
 * 13th month, a 32nd day, a 25th hour: `0xFFFF` in both read as 2108-04-01 08:04:02 once rolled
 * over), as a tar's impossible time is.
 */
function zipTimeOf(entry: yauzl.Entry): string | null {
  // An extended timestamp wins (contract §9), whatever the MS-DOS fields hold: some writers leave
  // those at 0, which is no date.
  if (hasExtendedTime(entry)) return timeOf(entry.getLastModDate({ timezone: 'UTC' }));
  const date = entry.lastModFileDate;
  const time = entry.lastModFileTime;
  const [day, month] = [date & 0x1f, (date >> 5) & 0x0f];
  const [seconds, minutes, hours] = [(time & 0x1f) * 2, (time >> 5) & 0x3f, time >> 11];
  if (month < 1 || month > 12 || day < 1 || day > new Date(Date.UTC(1980 + (date >> 9), month, 0)).getUTCDate()) return null;
  if (hours > 23 || minutes > 59 || seconds > 59) return null;
  return timeOf(entry.getLastModDate({ timezone: 'UTC' }));
}

/**
 * Whether yauzl's getLastModDate reads this entry's time from an extra field rather than its MS-DOS
 * fields: Info-ZIP's extended timestamp (0x5455) with a modification time, or an NTFS one (0x000a,
 * its first tag), as yauzl takes them.
 */
function hasExtendedTime(entry: yauzl.Entry): boolean {
  return entry.extraFields.some(
    ({ id, data }) => (id === 0x5455 && data.length >= 5 && (data[0]! & 1) === 1) || (id === 0x000a && data.length === 32 && data.readUInt16LE(4) === 1 && data.readUInt16LE(6) === 24),
  );
}

/**
 * Whether a ZIP entry is a symbolic link, as Info-ZIP stores one (`zip -y`): made on Unix, the mode
 * in the upper half of its external attributes a link's, its data the target's path. Extracted, it
 * became a file holding that path; a tar's links are skipped, and so is this.
 */
function isZipSymlink(entry: yauzl.Entry): boolean {
  return entry.versionMadeBy >>> 8 === 3 && ((entry.externalFileAttributes >>> 16) & 0o170000) === 0o120000;
}

function zipEntryOf(entry: yauzl.Entry): ArchiveEntry {
  const { path, directory } = zipPath(entry);
  if (!directory && isZipSymlink(entry)) {
    return { path, directory: false, size: 0, compressedSize: entry.compressedSize, modifiedAt: zipTimeOf(entry), encrypted: entry.isEncrypted(), special: 'symlink' };
  }
  return {
    path,
    directory,
    size: entry.uncompressedSize,
    compressedSize: entry.compressedSize,
    modifiedAt: zipTimeOf(entry),
    encrypted: entry.isEncrypted(),
  };
}

/**
 * Feeds a tar entry into a stream of its own, as the reader takes it. Whoever reads it may destroy
 * it (a limit reached): the rest of the entry is then skipped, not the rest of the archive, which
 * destroying tar-stream's own entry stream would end.
 */
function tarEntryStream(entry: TarEntry): { stream: Readable; pumped: Promise<void> } {
  const out = new PassThrough();
  const pumped = (async () => {
    try {
      for await (const chunk of tarChunks(entry)) {
        if (out.destroyed) continue;
        if (!out.write(chunk)) {
          await new Promise<void>((resolve) => {
            const done = () => {
              out.off('drain', done).off('close', done);
              resolve();
            };
            out.on('drain', done).on('close', done);
          });
        }
      }
    } catch (error) {
      out.destroy(error as Error);
      throw error;
    }
    if (!out.destroyed) out.end();
  })();
  // The archive's failure reaches the reader through the stream and the walk through `pumped`; once
  // the reader has stopped listening (it gave up on the entry), or the walk has ended on an error of
  // its own, neither may fall to the process as an unhandled error.
  out.on('error', () => {});
  pumped.catch(() => {});
  return { stream: out, pumped };
}

/**
 * Every entry of an archive in order, each with a way to stream its bytes (contract §9, extraction).
 * `visit` must finish with an opened stream (read it to its end or destroy it) before it returns;
 * the walk goes on only then, so one entry is read at a time. A ZIP entry's stream fails when it
 * inflates past its declared size (yauzl's size validation), so a declared size can be trusted as a
 * limit. `signal` ends the walk between entries.
 */
export async function walkEntries(
  storage: Storage,
  key: string,
  size: number,
  visit: (entry: ArchiveEntry, open: () => Promise<Readable>) => Promise<void>,
  signal?: AbortSignal,
): Promise<void> {
  const kind = await archiveKind(storage, key, size);
  if (kind === 'zip') {
    const zip = await openZip(storage, key, size);
    for await (const raw of zipEntries(zip)) {
      if (signal?.aborted) break;
      const entry = zipEntryOf(raw);
      await visit(entry, () => openZipEntry(zip, raw));
    }
    return;
  }
  await walkTar(storage, key, kind === 'tar.gz', async (header, entry) => {
    if (signal?.aborted) {
      await drain(entry);
      return 'stop';
    }
    const described = tarEntryOf(header);
    if (described === null) {
      await drain(entry);
      return 'continue';
    }
    let opened: Promise<void> | null = null;
    await visit(
      described,
      async () => {
        const { stream, pumped } = tarEntryStream(entry);
        opened = pumped;
        return stream;
      },
    );
    await (opened ?? drain(entry));
    return 'continue';
  });
}

/** The manifest of an archive object (contract §9). */
export async function readManifest(storage: Storage, key: string, size: number, limit = MANIFEST_ENTRY_LIMIT): Promise<ArchiveManifest> {
  const kind = await archiveKind(storage, key, size);
  if (kind === 'zip') {
    const { manifest, add } = manifestCollector('zip', limit);
    for await (const entry of zipEntries(await openZip(storage, key, size))) add(zipEntryOf(entry));
    return manifest;
  }
  const { manifest, add } = manifestCollector('tar', limit);
  await walkTar(storage, key, kind === 'tar.gz', async (header, entry) => {
    await drain(entry);
    const described = tarEntryOf(header);
    if (described !== null) add(described);
    return 'continue';
  });
  return manifest;
}

/** An entry's bytes, streamed, with its declared size; null for an unknown path or a directory. */
export async function openEntry(storage: Storage, key: string, size: number, wanted: string): Promise<{ stream: Readable; size: number; encrypted: boolean } | null> {
  const kind = await archiveKind(storage, key, size);
  if (kind === 'zip') {
    const zip = await openZip(storage, key, size);
    for await (const entry of zipEntries(zip)) {
      const { path, directory } = zipPath(entry);
      if (directory || path !== wanted || isZipSymlink(entry)) continue;
      if (entry.uncompressedSize > LARGEST_DECLARED_SIZE) throw new DamagedEntryError(`The entry cannot be read: it declares more than ${LARGEST_DECLARED_SIZE} bytes`);
      if (entry.isEncrypted()) return { stream: new PassThrough().end(), size: entry.uncompressedSize, encrypted: true };
      // Leaving the loop closes the ZipFile; yauzl keeps its reader open until this stream ends.
      const stream = await begun(await openZipEntry(zip, entry));
      return { stream, size: entry.uncompressedSize, encrypted: false };
    }
    return null;
  }
  const out = new PassThrough();
  let announce: (size: number) => void = () => {};
  const announced = new Promise<number>((resolve) => (announce = resolve));
  const walked = walkTar(storage, key, kind === 'tar.gz', async (header, entry) => {
    if ((header.type !== 'file' && header.type !== 'contiguous-file') || tarPath(header.name) !== wanted) {
      await drain(entry);
      return 'continue';
    }
    announce(header.size ?? 0);
    // Written as the reader takes it, so a slow client holds back the archive's stream.
    for await (const chunk of tarChunks(entry)) {
      // The client went away: stop reading the archive. (Checked before writing: a destroyed
      // stream refuses the write and has closed already, so waiting for its 'close' would never end.)
      if (out.destroyed) return 'stop';
      if (!out.write(chunk)) await Promise.race([once(out, 'drain'), once(out, 'close')]);
    }
    out.end();
    return 'stop';
  });
  const outcome = await Promise.race([walked.then(() => null), announced]);
  if (outcome === null) return null;
  walked.catch((error: unknown) => out.destroy(error as Error));
  return { stream: out, size: outcome, encrypted: false };
}
