import { withoutDirectionControls } from '../api/display-text.ts';
import { withPlainLetters } from '../shared/search-text.ts';

/**
 * RFC 6266 filename parameters: an ASCII fallback and the UTF-8 name, without direction controls (an
 * archive entry's `invoice\u202Egnp.exe` would be saved as what shows as "invoiceexe.png"). The
 * fallback, which `curl -OJ` and older clients use, keeps letters without their accents (`café` is
 * `cafe`, not `caf_`; `Łódź` is `Lodz`).
 */
export function contentDisposition(kind: 'inline' | 'attachment', stored: string): string {
  const name = withoutDirectionControls(stored.toWellFormed());
  // NFKD takes accents off and gives fullwidth and ligature letters their plain ones (`Ｆ` is `F`, `ﬁ`
  // is `fi`); NFC then puts back together what NFKD took apart and the ASCII name cannot hold, so a
  // Hangul syllable is one `_`, not one for each of its two or three letters.
  const asciiFallback = withPlainLetters(name.normalize('NFKD').replace(/\p{Mn}/gu, '').normalize('NFC'))
    // Per character (`u`): an emoji is one `_`, not one for each half of its UTF-16 pair.
    .replace(/[^\x20-\x7e]/gu, '_')
    // NFKD also gives fullwidth look-alikes their ASCII forms: a stored `．bash_aliases` or `．．／x`
    // (other characters, kept in names) became a hidden file or a path for `curl -OJ`, and `％41`
    // something a client decodes. What stored names leave out of ASCII stays out of the fallback:
    // path and reserved characters are `_`, and no dot or space leads or ends it (a fullwidth space is
    // one after NFKD; Windows drops a trailing dot).
    .replace(/["\\/:*?<>|%]/g, '_')
    .replace(/^[. ]+|[. ]+$/g, '');
  const ascii = asciiFallback === '' ? 'file' : asciiFallback;
  // encodeURIComponent leaves ' ( ) * and ! as they are; RFC 5987's value allows ! but not the rest.
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
