import { randomInt } from 'node:crypto';
import path from 'node:path';

const MAX_NAME_LENGTH = 200;
const alphanumeric = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * A file name that is safe as one URL path segment and on every filesystem: no directories,
 * control characters or URL/shell metacharacters, no leading dot, bounded length, extension kept.
 */
export function sanitizeFileName(raw: string): string {
  return keptFileName(raw) ?? 'file';
}

/** sanitizeFileName's name, or null when nothing of `raw` is kept (blank, or only characters it drops). */
export function keptFileName(raw: string): string | null {
  // Half of a surrogate pair alone (JSON can spell one) is no text: URLs cannot encode it.
  let name = path.posix.basename(raw.toWellFormed().replaceAll('\\', '/')).normalize('NFC');
  // Control characters that separate words (a tab, a line break) become a space first, and so `_`
  // below: dropped, "Foo\tBar" became "FooBar" and a search for "bar" or "foo bar" missed it.
  name = name.replace(/[\t\n\v\f\r\u0085]/g, ' ');
  name = name.replace(/[\p{Cc}\p{Cf}]/gu, '');
  name = name.replace(/[/?#%"<>|*:;`$&'{}[\]^~+=,@!]/g, '');
  // Spaces around the name are no part of it (a trailing one would become `_` after the extension).
  name = name.trim().replace(/\s+/gu, '_').replace(/^[._-]+/, '').replace(/_+/g, '_');
  if (name === '' || name === '.' || name === '..') return null;
  if (name.length > MAX_NAME_LENGTH) {
    const ext = path.posix.extname(name).slice(0, 20);
    let end = MAX_NAME_LENGTH - ext.length;
    // Not between the two halves of a character beyond the BMP (an emoji): that half alone is no text.
    if (/[\uDC00-\uDFFF]/.test(name[end] ?? '')) end -= 1;
    name = name.slice(0, end) + ext;
  }
  return name;
}

/**
 * A multipart part's file name as the sender meant it. The HTML form encoding (browsers, and curl
 * after them) writes `"` as `%22` and CR and LF as `%0D` and `%0A`; nothing else is encoded, so
 * nothing else is decoded.
 */
export function formFileName(raw: string): string {
  return raw.replace(/%22|%0D|%0A/gi, (code) => String.fromCharCode(parseInt(code.slice(1), 16)));
}

/** `photo.png`, then `photo-1.png`, `photo-2.png`, … */
export function* nameCandidates(name: string): Generator<string> {
  yield name;
  const ext = path.posix.extname(name);
  const stem = ext && ext !== name ? name.slice(0, -ext.length) : name;
  for (let i = 1; ; i++) yield `${stem}-${i}${ext}`;
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
