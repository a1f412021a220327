/**
 * An absolute http(s) URL already written the way the WHATWG parser reads it: `http(s)://`, then
 * printable ASCII without a backslash (which the parser reads as a slash).
 */
const asRead = /^https?:\/\/[\x21-\x5b\x5d-\x7e]+$/i;

/**
 * The form in which to keep a URL the parser accepted: as written when that is how it is read,
 * else the parser's form. The parser drops tabs and line breaks, reads `\` as `/`, and takes
 * `http:example.com` for `http://example.com`; a URL kept as written would then show one address
 * and lead to another (a browser given it in Location may even stay on this host).
 */
export function keptUrl(written: string, parsed: URL): string {
  return asRead.test(written) ? written : parsed.href;
}
