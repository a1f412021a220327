import { randomInt } from 'node:crypto';
import path from 'node:path';
import { hasVisibleCharacter } from './display-name.ts';

const MAX_NAME_LENGTH = 200;
// Most filesystems (ext4, APFS, NTFS in UTF-8 tools) take 255 bytes per name: a name that fits in
// 200 characters of CJK (600 bytes) failed to be written by `unzip` from an archive Hoard made.
const MAX_NAME_BYTES = 255;
const alphanumeric = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** Made when a name is first cut: made at load, ICU's segmentation data stayed in every process from its start. */
let graphemes: Intl.Segmenter | undefined;

/**
 * A file name that is safe as one URL path segment and on every filesystem: no directories,
 * control characters or URL/shell metacharacters, no leading dot, bounded length, extension kept.
 */
export function sanitizeFileName(raw: string, typeExtension: string | null = null): string {
  const kept = keptFileName(raw);
  if (kept !== null) return kept;
  // Nothing kept: `file`, with the extension the name had (`ㅤ.png` is `file.png`), else the one of
  // the file's type (`typeExtension`): curl names what it reads from standard input `-`, and a link
  // to a bare `file` downloads as a file no program opens by itself.
  const extension = extensionOf(raw.toWellFormed()) ?? typeExtension;
  return extension ? `file.${extension}` : 'file';
}

/**
 * sanitizeFileName's name, or null when nothing of `raw` is kept (blank, only characters it drops,
 * or nothing visible: a combining mark alone, a Hangul filler).
 */
export function keptFileName(raw: string): string | null {
  // Half of a surrogate pair alone (JSON can spell one) is no text: URLs cannot encode it.
  let name = path.posix.basename(raw.toWellFormed().replaceAll('\\', '/')).normalize('NFC');
  // Control characters that separate words (a tab, a line break) become a space first, and so `_`
  // below: dropped, "Foo\tBar" became "FooBar" and a search for "bar" or "foo bar" missed it.
  name = name.replace(/[\t\n\v\f\r\u0085]/g, ' ');
  // Other control and format characters go: the direction overrides and isolates would show
  // `invoice\u202Egnp.exe` as "invoiceexe.png", and zero-width spaces hide in a name. The two
  // joiners stay, being parts of words (Persian's non-joiner in "می‌خواهم") and of emoji (the
  // family 👨‍👩‍👧, a skin-toned 👩🏽‍💻), and so do the tag characters of a subdivision flag (🏴 England).
  name = name.replace(/(\u{1F3F4}[\u{E0020}-\u{E007E}]+\u{E007F})|(?![\u200c\u200d])[\p{Cc}\p{Cf}]/gu, (_, flag: string | undefined) => flag ?? '');
  name = name.replace(/[/?#%"<>|*:;`$&'{}[\]^~+=,@!]/g, '');
  // Spaces around the name are no part of it (a trailing one would become `_` after the extension).
  name = name.trim().replace(/\s+/gu, '_');
  // A joiner joins two characters: one at either end, beside an underscore or a dot, or doubled
  // joins nothing (`a\u200d.txt` looked like `a.txt` and was another name and link).
  name = name.replace(/(^|[_.])[\u200c\u200d]+|[\u200c\u200d]+(?=[_.]|$)/gu, '$1').replace(/([\u200c\u200d])[\u200c\u200d]+/gu, '$1');
  // Leading dots, dashes and underscores go once the joiners have: one before them (`\u200d.htaccess`)
  // hid the dot and left a hidden file's name.
  name = name.replace(/^[._-]+/, '').replace(/_+/g, '_');
  // Something to see before the extension too: `ㅤ.txt` (a Hangul filler) showed as ".txt".
  const ext = extensionPart(name);
  const stem = name.slice(0, name.length - ext.length);
  if (name === '' || name === '.' || name === '..' || !hasVisibleCharacter(stem)) return null;
  // Within 200 UTF-16 units and 255 bytes, the extension kept.
  return withTail(stem, ext);
}

/** `stem` + `tail`, the stem cut between whole characters as far as the two must fit. */
function withTail(stem: string, tail: string): string {
  const fits = (text: string) => text.length <= MAX_NAME_LENGTH && Buffer.byteLength(text) <= MAX_NAME_BYTES;
  if (fits(stem + tail)) return stem + tail;
  let kept = '';
  // By grapheme: an emoji's halves, a letter and its accent, a family's joined people stay together.
  for (const { segment } of (graphemes ??= new Intl.Segmenter('en', { granularity: 'grapheme' })).segment(stem)) {
    if (!fits(kept + segment + tail)) break;
    kept += segment;
  }
  // A cut leaves no separator dangling before the extension (`notes_.txt`), nor a joiner.
  kept = kept.replace(/[._\u200c\u200d-]+$/u, '');
  return (kept === '' ? 'file' : kept) + tail;
}

/**
 * The extension a name ends with, dot included, or '' when what follows its last dot is no
 * extension: `Dr._Smiths_notes_final` has none, where `path.extname` gave `._Smiths_notes_final`,
 * which a cut kept as the name's end and a second upload's `-1` went before.
 */
function extensionPart(name: string): string {
  const ext = path.posix.extname(name);
  return ext !== name && /^\.[\p{L}\p{N}]{1,16}$/u.test(ext) ? ext : '';
}

/**
 * A multipart part's file name as the sender meant it. The HTML form encoding (browsers, and curl
 * after them) writes `"` as `%22` and CR and LF as `%0D` and `%0A`; nothing else is encoded, so
 * nothing else is decoded. A name that is nothing but RFC 2047 encoded words is decoded: .NET
 * (C#'s HttpClient, PowerShell's `-Form`) writes a name beyond ASCII so in `filename`, beside its
 * `filename*`, and the form parser reads `filename` when the field's name is quoted.
 */
export function formFileName(raw: string): string {
  return encodedWords(raw) ?? raw.replace(/%22|%0D|%0A/gi, (code) => String.fromCharCode(parseInt(code.slice(1), 16)));
}

const encodedWord = /=\?([^?\s]+)\?([BbQq])\?([^?\s]*)\?=/g;

/** `=?charset?B|Q?text?=` words, separated by white space only (RFC 2047 §6.2), decoded; else null. */
function encodedWords(raw: string): string | null {
  if (!/^\s*=\?[^?\s]+\?[BbQq]\?[^?\s]*\?=(\s+=\?[^?\s]+\?[BbQq]\?[^?\s]*\?=)*\s*$/.test(raw)) return null;
  let text = '';
  for (const [, charset, coding, payload] of raw.matchAll(encodedWord)) {
    let bytes: Buffer;
    if (coding!.toUpperCase() === 'B') {
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(payload!) || payload!.length % 4 !== 0) return null;
      bytes = Buffer.from(payload!, 'base64');
    } else {
      if (/=(?![0-9A-Fa-f]{2})/.test(payload!)) return null;
      bytes = Buffer.from(payload!.replace(/_/g, ' ').replace(/=([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1');
    }
    try {
      // RFC 2231's language suffix (`utf-8*en`) names no charset of its own. An unknown charset
      // and bytes that are not of it both throw.
      text += new TextDecoder(charset!.split('*')[0]!, { fatal: true }).decode(bytes);
    } catch {
      return null;
    }
  }
  return text;
}

/** `photo.png`, then `photo-1.png`, `photo-2.png`, … */
export function* nameCandidates(name: string): Generator<string> {
  yield name;
  const ext = extensionPart(name);
  const stem = name.slice(0, name.length - ext.length);
  // A name at the length limit keeps within it: the stem gives way to the number.
  for (let i = 1; ; i++) yield withTail(stem, `-${i}${ext}`);
}

/** Random URL names keep the extension so browsers and embeds still know the type. */
export function randomFileName(extension: string | null, length = 10): string {
  let name = '';
  for (let i = 0; i < length; i++) name += alphanumeric[randomInt(alphanumeric.length)];
  return extension ? `${name}.${extension}` : name;
}

export function extensionOf(name: string): string | null {
  const ext = path.posix.extname(name).slice(1).toLowerCase();
  return /^[a-z0-9]{1,10}$/.test(ext) ? ext : null;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A name stored as bytes, as text. Linux file names and the names in a tar's ustar headers are
 * bytes: those written by an older system may be Latin-1 or Windows-1252, not UTF-8. Such a name is
 * read as Latin-1, where every byte is a character (`caf\xe9.txt` is `café.txt`), rather than with
 * replacement characters, under which different names would share one spelling.
 */
export function nameFromBytes(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  }
}
