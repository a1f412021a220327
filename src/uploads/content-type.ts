import { createHash } from 'node:crypto';
import { fileTypeFromBuffer, supportedMimeTypes } from 'file-type';
import mime from 'mime';
import { invalid } from '../errors.ts';
import { MIME_TYPE_MAX_LENGTH } from '../api/vocabulary.ts';

/** Enough bytes for every signature file-type knows. */
const HEAD_BYTES = 4100;

/**
 * Sees the bytes as storage writes them (`PutOptions.onData`), keeping their SHA-256 and the first
 * few KiB, so the content can be identified after streaming without reading the file twice. An
 * observer rather than a Transform: a stream stage of its own would cost a scheduling round per chunk.
 */
export class ContentProbe {
  private readonly hash = createHash('sha256');
  private head: Buffer[] = [];
  private headLength = 0;
  bytes = 0;

  readonly update = (chunk: Buffer): void => {
    this.hash.update(chunk);
    this.bytes += chunk.length;
    if (this.headLength < HEAD_BYTES) {
      // A copy: a view would keep the whole (often 64 KiB) chunk it belongs to alive.
      const slice = Buffer.from(chunk.subarray(0, HEAD_BYTES - this.headLength));
      this.head.push(slice);
      this.headLength += slice.length;
    }
  };

  digest(): string {
    return this.hash.digest('hex');
  }

  headBytes(): Buffer {
    return Buffer.concat(this.head);
  }
}

/**
 * Other names browsers and operating systems send for a type, and the one it is stored under (the
 * name content detection gives): Windows declares a .zip as application/x-zip-compressed, macOS a
 * .gz as application/x-gzip, and the IANA names of RAR and icons differ from the common ones.
 */
const aliases: Record<string, string> = {
  'image/jpg': 'image/jpeg',
  'image/pjpeg': 'image/jpeg',
  'image/x-png': 'image/png',
  'image/x-ms-bmp': 'image/bmp',
  'image/x-bmp': 'image/bmp',
  'image/vnd.microsoft.icon': 'image/x-icon',
  'audio/mp3': 'audio/mpeg',
  'audio/x-wav': 'audio/wav',
  'audio/wave': 'audio/wav',
  'application/x-zip-compressed': 'application/zip',
  'application/x-zip': 'application/zip',
  'multipart/x-zip': 'application/zip',
  'application/x-gzip': 'application/gzip',
  'application/x-gzip-compressed': 'application/gzip',
  'application/gzip-compressed': 'application/gzip',
  'application/vnd.rar': 'application/x-rar-compressed',
  'application/x-rar': 'application/x-rar-compressed',
  'application/x-zstd': 'application/zstd',
  'application/x-bzip': 'application/x-bzip2',
  'application/vnd.debian.binary-package': 'application/x-deb',
  'application/x-debian-package': 'application/x-deb',
  'application/x-java': 'application/java-vm',
  'application/x-java-vm': 'application/java-vm',
  'application/x-java-class': 'application/java-vm',
  'application/x-ms-dos-executable': 'application/x-msdownload',
  'application/x-msdos-program': 'application/x-msdownload',
  'application/x-dosexec': 'application/x-msdownload',
  'application/vnd.microsoft.portable-executable': 'application/x-msdownload',
  'application/x-pdf': 'application/pdf',
  // The names Windows, older browsers and Linux give fonts and Encapsulated PostScript.
  'application/x-font-ttf': 'font/ttf',
  'application/x-font-truetype': 'font/ttf',
  'application/x-font-otf': 'font/otf',
  'application/x-font-opentype': 'font/otf',
  'application/font-woff': 'font/woff',
  'application/x-font-woff': 'font/woff',
  'application/font-woff2': 'font/woff2',
  'image/x-eps': 'application/eps',
  'image/eps': 'application/eps',
  'application/x-eps': 'application/eps',
  'video/x-matroska': 'video/matroska',
};

export function normalizeMimeType(value: string): string {
  const base = value.split(';')[0]!.trim().toLowerCase();
  return aliases[base] ?? base;
}

const zipContainers = /^application\/(vnd\.openxmlformats|vnd\.oasis\.opendocument|epub\+zip|java-archive|x-java-archive|vnd\.android\.package-archive|x-xpinstall|vnd\.apple\.keynote|vnd\.apple\.pages|vnd\.apple\.numbers|x-ms-|zip)/;
/** Formats stored in a Compound File (Word, Excel and PowerPoint 97–2003, Outlook messages, installers). */
const compoundFiles = new Set(['application/x-cfb', 'application/x-ole-storage', 'application/msword', 'application/vnd.ms-excel', 'application/vnd.ms-powerpoint', 'application/vnd.ms-outlook', 'application/vnd.ms-project', 'application/vnd.visio', 'application/x-msi', 'application/x-ms-installer', 'application/vnd.ms-works']);
/**
 * What Windows and Linux declare a tarball as (Linux names each compression: its shared MIME
 * database), and what its content is detected as: the compressed stream, or a tar read through.
 */
const tarballs: Record<string, string[]> = {
  'application/x-compressed': ['application/gzip'],
  'application/x-compressed-tar': ['application/gzip'],
  'application/x-tgz': ['application/gzip'],
  'application/x-gtar': ['application/gzip', 'application/x-bzip2', 'application/x-xz'],
  'application/x-bzip-compressed-tar': ['application/x-bzip2'],
  'application/x-bzip2-compressed-tar': ['application/x-bzip2'],
  'application/x-xz-compressed-tar': ['application/x-xz'],
  'application/x-zstd-compressed-tar': ['application/zstd'],
};
/** The names of an executable or library of Linux and other Unix systems (ELF). */
const elfFiles = new Set(['application/x-elf', 'application/x-executable', 'application/x-sharedlib', 'application/x-pie-executable', 'application/x-object', 'application/x-coredump']);
/** Containers that many formats are built on, which is all a signature shows of them. */
const genericContainers = new Set(['application/zip', 'application/x-rar-compressed', 'application/x-cfb']);
/** ZIP-based formats the signature reader knows a name of, but not from the first bytes alone. */
const zipModels = new Set(['model/3mf', 'application/vnd.ms-package.3dmanufacturing-3dmodel+xml']);

/** Generic container names for audio or video: stored under the detected type, which players know. */
const mediaContainers = new Set(['application/mp4', 'application/ogg']);
const heifImages = new Set(['image/heic', 'image/heif', 'image/heic-sequence', 'image/heif-sequence']);

/**
 * Whether a declared type is consistent with what the bytes are. Containers are ambiguous (an .m4a
 * and an .mp4 share a signature; a .docx is a ZIP, a .doc a Compound File), so within audio/video,
 * between ZIP, a Compound File or ELF and the formats built on them, between a tarball's names and
 * its compression or tar, and between XML and the formats written in it, either name is accepted;
 * anything else must match exactly.
 */
function compatible(declared: string, detected: string): boolean {
  if (declared === detected) return true;
  const [declaredType] = declared.split('/');
  const [detectedType] = detected.split('/');
  const media = new Set(['audio', 'video']);
  if ((media.has(declaredType!) || mediaContainers.has(declared)) && media.has(detectedType!)) return true;
  if (zipContainers.test(declared) && zipContainers.test(detected)) return true;
  if (zipModels.has(declared) && detected === 'application/zip') return true;
  // A format built on ZIP, RAR or a Compound File that the signature reader has no name for (a
  // comic book archive, a KMZ, a Visio drawing): the container is all it could see, and no
  // contradiction. Image, audio, video and text types have signatures of their own, and a format
  // the reader knows would have been named, so those stay contradictions (a PNG declared for a ZIP),
  // as do textual application types (JSON, XML, scripts) which a container is not, and the names of
  // the families above (a tarball's, a Compound File's), which say what container they are.
  const ofAKnownFamily = Object.hasOwn(tarballs, declared) || compoundFiles.has(declared) || elfFiles.has(declared) || mediaContainers.has(declared) || zipContainers.test(declared);
  if (genericContainers.has(detected) && /^(application|model)\//.test(declared) && !supportedMimeTypes.has(declared) && !textTypes.test(declared) && !ofAKnownFamily) return true;
  // HEIC and HEIF are one container (ISO BMFF with HEIF brands): a phone's `.HEIC` written with the
  // `mif1` brand, or libheif's `.heif` with `heic`, were refused as contradictions.
  if (heifImages.has(declared) && heifImages.has(detected)) return true;
  // PostScript and Encapsulated PostScript are one language; an Illustrator file is a PDF.
  if (declared === 'application/postscript' && detected === 'application/eps') return true;
  if (declared === 'application/illustrator' && detected === 'application/pdf') return true;
  if (compoundFiles.has(declared) && compoundFiles.has(detected)) return true;
  // Word and Excel 2003 also save XML under .doc and .xls, with their Compound File types.
  if ((declared === 'application/msword' || declared === 'application/vnd.ms-excel') && (detected === 'application/xml' || detected === 'text/xml')) return true;
  if (elfFiles.has(declared) && elfFiles.has(detected)) return true;
  if (Object.hasOwn(tarballs, declared) && (tarballs[declared]!.includes(detected) || detected === 'application/x-tar')) return true;
  if ((declared === 'application/xml' || declared === 'text/xml' || declared.endsWith('+xml')) && detected.endsWith('xml')) return true;
  return false;
}

/** Refuses a declared type that is no MIME type (`type/subtype`, parameters allowed): a 400. */
export function checkDeclaredType(declared: string): void {
  if (declared.length > MIME_TYPE_MAX_LENGTH) throw invalid(`The declared file type is not a MIME type: it is at most ${MIME_TYPE_MAX_LENGTH} characters`);
  if (!/^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/.test(normalizeMimeType(declared))) throw invalid(`The declared file type "${declared}" is not a MIME type`);
}

/** Types whose content is text: a text declaration is not contradicted by text (isText). */
const textTypes = /^(text\/|application\/(json|ld\+json|javascript|ecmascript|x-sh|x-shellscript|yaml|x-yaml|toml|sql|x-ndjson)$)|\+(json|xml)$/;

/**
 * Whether the first bytes of a file are text: UTF-8 without a NUL byte. A signature of two or three
 * bytes ("MZ", "BM", "ID3", ARJ's 0x60 0xEA, which a backtick before a Hangul syllable spells) begins
 * ordinary notes too, while the formats they announce put binary fields, NUL bytes among them, right
 * after it. A character cut off at the end of the head is not an error (`stream`).
 */
function isText(head: Buffer): boolean {
  if (head.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: true });
    return true;
  } catch {
    return false;
  }
}

/**
 * The stored type (contract §4): the declared one unless missing or application/octet-stream, then
 * the detected one, then the one the name suggests. A declaration the content contradicts is a 400.
 * Text is not contradicted by a binary format's signature its first bytes happen to spell: a text
 * declaration stands, and an undeclared file's name decides before the signature
 * (docs/decisions.md, "Declared and detected types"). `plainTextByDefault`: `declared` is a
 * multipart part's type, where text/plain is also what no type means.
 */
export async function resolveMimeType(declared: string | undefined, head: Buffer, fileName: string, plainTextByDefault = false): Promise<string> {
  const detected = (await fileTypeFromBuffer(head))?.mime;
  let normalized = declared ? normalizeMimeType(declared) : '';
  // A multipart part without a Content-Type is text/plain (RFC 7578, 4.4), and the parser reports it
  // so, whether a type was sent or not. Contract §4 types an undeclared file from its content, else
  // its name: text/plain there is no declaration for content that is not text (a script's PNG sent
  // without a part type is a PNG, not a contradiction), nor for text whose name says another type
  // (Python's requests sends `report.json` untyped: it is JSON, not plain text).
  if (plainTextByDefault && normalized === 'text/plain') {
    const byName = mime.getType(fileName);
    if (!isText(head) || (byName !== null && byName !== 'text/plain')) normalized = '';
  }
  if (normalized && normalized !== 'application/octet-stream') {
    checkDeclaredType(declared!);
    // Windows declares a .csv as Excel's type where Excel is installed: text named .csv is CSV,
    // whatever signature its first bytes happen to spell (as for a text declaration, below).
    if (normalized === 'application/vnd.ms-excel' && mime.getType(fileName) === 'text/csv' && isText(head)) return 'text/csv';
    if (detected && !compatible(normalized, normalizeMimeType(detected)) && !(textTypes.test(normalized) && isText(head))) {
      throw invalid(`The declared file type ${normalized} does not match the content, which is ${detected}`);
    }
    if (detected && mediaContainers.has(normalized)) return normalizeMimeType(detected);
    return normalized;
  }
  // Text that spells a binary format's signature is named by its name first: notes.txt that begins
  // with "MZ" is text/plain, not a Windows program.
  const byName = mime.getType(fileName);
  if (detected && byName && !textTypes.test(normalizeMimeType(detected)) && isText(head)) return byName;
  return detected ?? byName ?? 'application/octet-stream';
}

export function extensionFor(mimeType: string): string | null {
  return mime.getExtension(mimeType);
}
