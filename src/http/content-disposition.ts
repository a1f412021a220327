import { withoutDirectionControls } from '../api/display-text.ts';

// Letters no decomposition takes apart, as they are written without the keyboard that has them.
const PLAIN_LETTERS: Record<string, string> = { Ł: 'L', ł: 'l', Ø: 'O', ø: 'o', Đ: 'D', đ: 'd', Ħ: 'H', ħ: 'h', Ŧ: 'T', ŧ: 't', ı: 'i', Æ: 'AE', æ: 'ae', Œ: 'OE', œ: 'oe', ß: 'ss' };

/**
 * RFC 6266 filename parameters: an ASCII fallback and the UTF-8 name, without direction controls (an
 * archive entry's `invoice\u202Egnp.exe` would be saved as what shows as "invoiceexe.png"). The
 * fallback, which `curl -OJ` and older clients use, keeps letters without their accents (`café` is
 * `cafe`, not `caf_`; `Łódź` is `Lodz`).
 */
export function contentDisposition(kind: 'inline' | 'attachment', stored: string): string {
  const name = withoutDirectionControls(stored.toWellFormed());
  const ascii = name
    .normalize('NFD')
    .replace(/\p{Mn}/gu, '')
    .replace(/[ŁłØøĐđĦħŦŧıÆæŒœß]/g, (letter) => PLAIN_LETTERS[letter]!)
    .replace(/[^\x20-\x7e]/g, '_')
    .replace(/["\\]/g, '_');
  // encodeURIComponent leaves ' ( ) * and ! as they are; RFC 5987's value allows ! but not the rest.
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
