/**
 * Archive bytes for tests (contract §9): ZIP through `yazl`, tar and tar.gz through `tar-stream` and
 * node:zlib, plus the hostile archives a reader must survive — entry names that traverse or are
 * absolute or use `\`, an entry flagged encrypted, an entry that inflates past its declared size, and
 * an archive with more entries than a manifest lists.
 *
 * yazl refuses names such as `../x`, `/abs/path` and turns `\` into `/`, and it cannot lie about a
 * size or set the encryption bit; so such ZIPs are written by yazl with stand-in values of the same
 * length and then patched in place, at offsets found by walking the archive's own central directory
 * (`zipLayout`). Offsets follow PKWARE's APPNOTE.TXT:
 *
 * - local file header (signature 0x04034b50): +6 general-purpose flags (u16), +14 CRC-32 (u32),
 *   +18 compressed size (u32), +22 uncompressed size (u32), +26 name length (u16), +28 extra length
 *   (u16), +30 the name;
 * - central-directory record (signature 0x02014b50): +8 general-purpose flags (u16), +16 CRC-32,
 *   +20 compressed size, +24 uncompressed size (u32 each), +28 name length, +30 extra length, +32
 *   comment length (u16 each), +42 offset of the local header (u32), +46 the name; a field that holds
 *   0xffffffff has its real value in the ZIP64 extra field (id 0x0001), 8 bytes each, in the order
 *   uncompressed size, compressed size, local-header offset;
 * - end of central directory (0x06054b50): +10 entry count (u16), +12 directory size, +16 directory
 *   offset (u32 each); when those are saturated, the ZIP64 locator (0x07064b50) 20 bytes before it
 *   points (+8, u64) at the ZIP64 end record (0x06064b50): +32 entry count, +40 directory size,
 *   +48 directory offset (u64 each).
 *
 * yazl writes a buffer entry's CRC and sizes into its local header (no data descriptor) and no
 * extra field there; the central directory carries the extended timestamp (0x5455) and, in ZIP64
 * form, the ZIP64 extra field.
 */
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import tar from 'tar-stream';
import yazl from 'yazl';

/** The modification time every builder writes unless told otherwise: whole seconds, as MS-DOS time can only hold even ones. */
export const ARCHIVE_MTIME = new Date('2026-01-02T03:04:06Z');

/**
 * One entry of a ZIP or tar: a file (`data`, stored when `compress` is false, deflated otherwise in a
 * ZIP; ignored in a tar) or an empty directory (`dir`, a trailing `/` is added in a ZIP if missing).
 * Names are written byte for byte as given (UTF-8), `..`, leading `/` and `\` included.
 */
/** `mode`: the Unix mode a ZIP entry records (as `zip -y` stores a symbolic link: 0o120777, its target as data). */
export type ArchiveEntrySpec = { name: string; data: string | Uint8Array; compress?: boolean; mode?: number } | { dir: string };

export interface ZipOptions {
  /** yazl's `forceZip64Format`, on every entry and on the end record. */
  zip64?: boolean;
  mtime?: Date;
}

const LOCAL_SIGNATURE = 0x04034b50;
const CENTRAL_SIGNATURE = 0x02014b50;
const END_SIGNATURE = 0x06054b50;
const ZIP64_LOCATOR_SIGNATURE = 0x07064b50;
const ZIP64_END_SIGNATURE = 0x06064b50;
const SATURATED = 0xffffffff;

/** Where one entry's fields sit in a ZIP's bytes (absolute offsets), as read from its central directory. */
export interface ZipRecordLayout {
  name: Buffer;
  /** The central-directory record. */
  central: number;
  /** The local file header. */
  local: number;
  /** Absolute offsets of the ZIP64 extra's 8-byte values, for those the record saturates. */
  zip64: { uncompressedSize?: number; compressedSize?: number; localOffset?: number };
  /** The central-directory record's extra fields: each one's ID and where its header starts. */
  extras: Array<{ id: number; at: number }>;
}

/** Walks a ZIP's central directory (plain or ZIP64 end record) and returns every entry's offsets. */
export function zipLayout(bytes: Buffer): ZipRecordLayout[] {
  let end = -1;
  // The end record is 22 bytes plus a comment of at most 65,535.
  for (let at = bytes.length - 22; at >= Math.max(0, bytes.length - 22 - 0xffff); at -= 1) {
    if (bytes.readUInt32LE(at) === END_SIGNATURE) {
      end = at;
      break;
    }
  }
  if (end < 0) throw new Error('no end of central directory record');
  let count = bytes.readUInt16LE(end + 10);
  let offset = bytes.readUInt32LE(end + 16);
  if (end >= 20 && bytes.readUInt32LE(end - 20) === ZIP64_LOCATOR_SIGNATURE) {
    const zip64End = Number(bytes.readBigUInt64LE(end - 20 + 8));
    if (bytes.readUInt32LE(zip64End) !== ZIP64_END_SIGNATURE) throw new Error('bad ZIP64 end record');
    count = Number(bytes.readBigUInt64LE(zip64End + 32));
    offset = Number(bytes.readBigUInt64LE(zip64End + 48));
  }
  const records: ZipRecordLayout[] = [];
  let at = offset;
  for (let i = 0; i < count; i += 1) {
    if (bytes.readUInt32LE(at) !== CENTRAL_SIGNATURE) throw new Error(`no central-directory record at ${at}`);
    const nameLength = bytes.readUInt16LE(at + 28);
    const extraLength = bytes.readUInt16LE(at + 30);
    const commentLength = bytes.readUInt16LE(at + 32);
    const name = bytes.subarray(at + 46, at + 46 + nameLength);
    const zip64: ZipRecordLayout['zip64'] = {};
    const extras: ZipRecordLayout['extras'] = [];
    let local = bytes.readUInt32LE(at + 42);
    for (let extra = at + 46 + nameLength; extra < at + 46 + nameLength + extraLength; ) {
      const id = bytes.readUInt16LE(extra);
      const size = bytes.readUInt16LE(extra + 2);
      extras.push({ id, at: extra });
      if (id === 0x0001) {
        let value = extra + 4;
        if (bytes.readUInt32LE(at + 24) === SATURATED) (zip64.uncompressedSize = value), (value += 8);
        if (bytes.readUInt32LE(at + 20) === SATURATED) (zip64.compressedSize = value), (value += 8);
        if (local === SATURATED) (zip64.localOffset = value), (local = Number(bytes.readBigUInt64LE(value)));
      }
      extra += 4 + size;
    }
    if (bytes.readUInt32LE(local) !== LOCAL_SIGNATURE) throw new Error(`no local header at ${local}`);
    records.push({ name, central: at, local, zip64, extras });
    at += 46 + nameLength + extraLength + commentLength;
  }
  return records;
}

/** Whether yazl stores this name byte for byte (it refuses `..` segments and absolute names, and turns `\` into `/`). */
function yazlKeeps(name: string): boolean {
  return !name.includes('\\') && !name.startsWith('/') && !/^[a-zA-Z]:/.test(name) && !name.split('/').includes('..') && name !== '' && name !== '/';
}

async function collect(stream: AsyncIterable<unknown>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

interface PlannedEntry {
  /** The bytes the archive must finally hold as this entry's name. */
  wanted: Buffer;
  /** What yazl is given; same byte length as `wanted`. */
  given: string;
}

function plan(entries: ArchiveEntrySpec[]): PlannedEntry[] {
  return entries.map((entry) => {
    const name = 'dir' in entry ? (entry.dir.endsWith('/') ? entry.dir : `${entry.dir}/`) : entry.name;
    const wanted = Buffer.from(name, 'utf8');
    if (yazlKeeps(name)) return { wanted, given: name };
    // A stand-in yazl accepts, of the same byte length, patched back afterwards.
    if ('dir' in entry) {
      if (wanted.length < 2) throw new Error(`cannot write a directory named ${JSON.stringify(name)}`);
      return { wanted, given: `${'d'.repeat(wanted.length - 1)}/` };
    }
    return { wanted, given: 'f'.repeat(wanted.length) };
  });
}

function build(entries: ArchiveEntrySpec[], planned: PlannedEntry[], options: ZipOptions): yazl.ZipFile {
  const file = new yazl.ZipFile();
  const mtime = options.mtime ?? ARCHIVE_MTIME;
  const zip64 = options.zip64 ?? false;
  entries.forEach((entry, i) => {
    const given = planned[i]!.given;
    if ('dir' in entry) file.addEmptyDirectory(given, { mtime });
    else {
      const data = typeof entry.data === 'string' ? Buffer.from(entry.data, 'utf8') : Buffer.from(entry.data.buffer, entry.data.byteOffset, entry.data.byteLength);
      file.addBuffer(data, given, { mtime, compress: entry.compress ?? true, forceZip64Format: zip64, ...(entry.mode !== undefined ? { mode: entry.mode } : {}) });
    }
  });
  file.end({ forceZip64Format: zip64, comment: '' });
  return file;
}

/** Writes the wanted names over yazl's stand-ins, in both the local header and the central directory. */
function restoreNames(bytes: Buffer, planned: PlannedEntry[]): ZipRecordLayout[] {
  const layout = zipLayout(bytes);
  if (layout.length !== planned.length) throw new Error('entry count changed while writing');
  layout.forEach((record, i) => {
    const { wanted, given } = planned[i]!;
    if (wanted.toString('utf8') === given) return;
    wanted.copy(bytes, record.central + 46);
    wanted.copy(bytes, record.local + 30);
  });
  return zipLayout(bytes);
}

/** A ZIP holding `entries` in order, with `options.mtime` (default `ARCHIVE_MTIME`) on every entry. */
export async function zipBytes(entries: ArchiveEntrySpec[], options: ZipOptions = {}): Promise<Buffer> {
  const planned = plan(entries);
  const bytes = await collect(build(entries, planned, options).outputStream);
  restoreNames(bytes, planned);
  return bytes;
}

function recordNamed(layout: ZipRecordLayout[], name: string): ZipRecordLayout {
  const record = layout.find((r) => r.name.toString('utf8') === name);
  if (!record) throw new Error(`no entry named ${JSON.stringify(name)}`);
  return record;
}

/**
 * A ZIP in which the file entry named `encrypted` has general-purpose bit 0 ("encrypted") set in its
 * local header (+6) and its central-directory record (+8); its data stays plain. That entry is always
 * deflated: for a stored entry flagged encrypted, readers (yauzl among them) expect the 12-byte
 * encryption header to be counted in its compressed size, and would reject the archive instead.
 */
export async function encryptedFlagZip(entries: ArchiveEntrySpec[], encrypted: string, options: ZipOptions = {}): Promise<Buffer> {
  const adjusted = entries.map((entry) => ('name' in entry && entry.name === encrypted ? { ...entry, compress: true } : entry));
  const bytes = await zipBytes(adjusted, options);
  const record = recordNamed(zipLayout(bytes), encrypted);
  bytes.writeUInt16LE(bytes.readUInt16LE(record.local + 6) | 1, record.local + 6);
  bytes.writeUInt16LE(bytes.readUInt16LE(record.central + 8) | 1, record.central + 8);
  return bytes;
}

export interface InflatingZipOptions extends ZipOptions {
  /** The lying entry's name (default `bomb.bin`). */
  name?: string;
  /** What its deflated data really inflates to, in zero bytes (default 1 MiB). */
  realSize?: number;
  /** The uncompressed size it declares (default 1 KiB). */
  declaredSize?: number;
  /** Other, honest entries written before it. */
  entries?: ArchiveEntrySpec[];
}

/**
 * The zip-bomb case: an entry whose deflated data inflates to `realSize` zero bytes while its local
 * header (+22), central-directory record (+24) and, in ZIP64 form, its ZIP64 extra field declare
 * `declaredSize`. Its CRC-32 stays that of the real data: yauzl does not check CRCs, so what must
 * stop the entry is the size check (`validateEntrySizes`), which fails the entry's stream with
 * "too many bytes in the stream" once more than `declaredSize` bytes come out, without passing on
 * the chunk that crossed it.
 */
export async function inflatingZip(options: InflatingZipOptions = {}): Promise<{ bytes: Buffer; name: string; realSize: number; declaredSize: number }> {
  const name = options.name ?? 'bomb.bin';
  const realSize = options.realSize ?? 1024 * 1024;
  const declaredSize = options.declaredSize ?? 1024;
  if (declaredSize >= realSize) throw new Error('the declared size must be smaller than the real one');
  const bytes = await zipBytes([...(options.entries ?? []), { name, data: new Uint8Array(realSize), compress: true }], options);
  const record = recordNamed(zipLayout(bytes), name);
  bytes.writeUInt32LE(declaredSize, record.local + 22);
  if (record.zip64.uncompressedSize !== undefined) bytes.writeBigUInt64LE(BigInt(declaredSize), record.zip64.uncompressedSize);
  else bytes.writeUInt32LE(declaredSize, record.central + 24);
  return { bytes, name, realSize, declaredSize };
}

/**
 * A ZIP of `count` stored entries `f/000001.txt`… each holding its own number, built in one pass
 * without yazl (whose per-entry bookkeeping is slow at tens of thousands): local header, data,
 * central directory, end record, with the ZIP64 end record when `count` exceeds 65,535.
 */
export function manyEntriesZip(count: number, options: { mtime?: Date } = {}): Buffer {
  const mtime = options.mtime ?? ARCHIVE_MTIME;
  const dosTime = (mtime.getUTCHours() << 11) | (mtime.getUTCMinutes() << 5) | (mtime.getUTCSeconds() >> 1);
  const dosDate = ((mtime.getUTCFullYear() - 1980) << 9) | ((mtime.getUTCMonth() + 1) << 5) | mtime.getUTCDate();
  const width = Math.max(6, String(count).length);
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (let i = 1; i <= count; i += 1) {
    const name = Buffer.from(`f/${String(i).padStart(width, '0')}.txt`, 'latin1');
    const data = Buffer.from(String(i), 'latin1');
    const crc = crc32(data);
    const local = Buffer.alloc(30 + name.length + data.length);
    local.writeUInt32LE(LOCAL_SIGNATURE, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(dosTime, 10);
    local.writeUInt16LE(dosDate, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(name.length, 26);
    name.copy(local, 30);
    data.copy(local, 30 + name.length);
    const central = Buffer.alloc(46 + name.length);
    central.writeUInt32LE(CENTRAL_SIGNATURE, 0);
    central.writeUInt16LE((3 << 8) | 20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(dosTime, 12);
    central.writeUInt16LE(dosDate, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    name.copy(central, 46);
    locals.push(local);
    centrals.push(central);
    offset += local.length;
  }
  const directory = Buffer.concat(centrals);
  const tail: Buffer[] = [];
  const saturated = count > 0xffff;
  if (saturated) {
    const zip64End = Buffer.alloc(56);
    zip64End.writeUInt32LE(ZIP64_END_SIGNATURE, 0);
    zip64End.writeBigUInt64LE(44n, 4);
    zip64End.writeUInt16LE((3 << 8) | 45, 12);
    zip64End.writeUInt16LE(45, 14);
    zip64End.writeBigUInt64LE(BigInt(count), 24);
    zip64End.writeBigUInt64LE(BigInt(count), 32);
    zip64End.writeBigUInt64LE(BigInt(directory.length), 40);
    zip64End.writeBigUInt64LE(BigInt(offset), 48);
    const locator = Buffer.alloc(20);
    locator.writeUInt32LE(ZIP64_LOCATOR_SIGNATURE, 0);
    locator.writeBigUInt64LE(BigInt(offset + directory.length), 8);
    locator.writeUInt32LE(1, 16);
    tail.push(zip64End, locator);
  }
  const end = Buffer.alloc(22);
  end.writeUInt32LE(END_SIGNATURE, 0);
  end.writeUInt16LE(saturated ? 0xffff : count, 8);
  end.writeUInt16LE(saturated ? 0xffff : count, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, ...tail, end]);
}

const CRC_TABLE = Uint32Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(data: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of data) crc = CRC_TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/**
 * A tar (ustar, through tar-stream) holding `entries` in order, gzip-compressed when `gzip` is set.
 * Names are written as given; `compress` has no meaning in a tar.
 */
export async function tarBytes(entries: ArchiveEntrySpec[], options: { gzip?: boolean; mtime?: Date } = {}): Promise<Buffer> {
  const mtime = options.mtime ?? ARCHIVE_MTIME;
  const pack = tar.pack();
  for (const entry of entries) {
    if ('dir' in entry) pack.entry({ name: entry.dir, type: 'directory', mtime });
    else pack.entry({ name: entry.name, mtime }, typeof entry.data === 'string' ? entry.data : Buffer.from(entry.data.buffer, entry.data.byteOffset, entry.data.byteLength));
  }
  pack.finalize();
  const bytes = await collect(Readable.from(pack as unknown as AsyncIterable<Buffer>));
  return options.gzip ? gzipSync(bytes) : bytes;
}

/**
 * A plain tar whose ustar header named `from` names `to` instead, as raw bytes (which need not be
 * UTF-8, as in tars written by older systems); the header's checksum is computed again.
 */
export function renamedInTar(tarFile: Buffer, from: string, to: Buffer): Buffer {
  return editedInTar(tarFile, from, (header) => {
    header.fill(0, 0, 100);
    to.copy(header, 0);
  });
}

/**
 * A plain tar whose ustar header named `name` holds `value` in its modification time's field
 * (12 bytes at offset 136), the header's checksum computed again: a header whole but for that value.
 */
export function retimedInTar(tarFile: Buffer, name: string, value: Buffer): Buffer {
  if (value.length !== 12) throw new Error('the time field is 12 bytes');
  return editedInTar(tarFile, name, (header) => value.copy(header, 136));
}

/**
 * A plain tar whose ustar header named `name` declares `size` bytes (octal, at offset 124), the
 * header's checksum computed again; no bytes are added after it. For a directory, whose size the
 * format says to ignore, the archive stays whole: GNU tar lists and extracts it.
 */
export function resizedInTar(tarFile: Buffer, name: string, size: number): Buffer {
  return editedInTar(tarFile, name, (header) => header.write(`${size.toString(8).padStart(11, '0')}\0`, 124, 'latin1'));
}

/**
 * A plain tar whose ustar header named `name` holds `value` in its size field (12 bytes at offset
 * 124: a base-256 number, say, that no octal digits could write), the header's checksum computed again.
 */
export function sizeFieldInTar(tarFile: Buffer, name: string, value: Buffer): Buffer {
  if (value.length !== 12) throw new Error('the size field is 12 bytes');
  return editedInTar(tarFile, name, (header) => value.copy(header, 124));
}

function editedInTar(tarFile: Buffer, name: string, edit: (header: Buffer) => void): Buffer {
  const out = Buffer.from(tarFile);
  for (let at = 0; at + 512 <= out.length; at += 512) {
    const header = out.subarray(at, at + 512);
    if (header.subarray(0, 100).toString('latin1').replace(/\0.*$/s, '') !== name) continue;
    edit(header);
    header.fill(0x20, 148, 156);
    const sum = header.reduce((total, byte) => total + byte, 0);
    header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
    return out;
  }
  throw new Error(`no header named ${name}`);
}

/**
 * A ZIP64 archive of `entries` whose central directory declares `sizes[name]` as the uncompressed
 * size of each entry named there (in its ZIP64 extra field, up to 2^64 − 1); the data is unchanged.
 */
export async function zipDeclaring(entries: ArchiveEntrySpec[], sizes: Record<string, bigint>): Promise<Buffer> {
  const bytes = await zipBytes(entries, { zip64: true });
  for (const [name, size] of Object.entries(sizes)) {
    const at = recordNamed(zipLayout(bytes), name).zip64.uncompressedSize;
    if (at === undefined) throw new Error(`${name} has no ZIP64 uncompressed size`);
    bytes.writeBigUInt64LE(size, at);
  }
  return bytes;
}

/** Bytes as a one-chunk stream, for `Storage.put`. */
export function streamOf(bytes: Uint8Array): Readable {
  return Readable.from([Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)]);
}
