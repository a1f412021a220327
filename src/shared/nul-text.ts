/**
 * Text with a NUL character (U+0000) is refused with a 400 wherever a request carries it
 * (docs/decisions.md, "Errors"): PostgreSQL cannot store it in text nor compare a column with it,
 * SQLite's full-text query syntax ends a quoted phrase at it, and no browser form, file name or
 * header can carry one. The HTTP layer checks paths, query strings and JSON bodies
 * (src/http/nul-text.ts); an upload's multipart fields are checked where they are read.
 */

/** The message of the 400 for text at `where` (`query.search`, `fields.password`). */
export function nulMessage(where: string): string {
  return `${where}: text must not contain the NUL character (U+0000)`;
}

/** Where `value` holds a NUL character, as `where` followed by the path inside it; null when nowhere. */
export function nulAt(value: unknown, where: string): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? where : null;
  if (typeof value !== 'object' || value === null) return null;
  // Parsed JSON, query strings and path parameters (whose objects the router and the query parser
  // make without Object's prototype); not a body some route takes as bytes or as a stream.
  if (ArrayBuffer.isView(value) || typeof (value as { pipe?: unknown }).pipe === 'function') return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nulAt(value[i], `${where}[${i}]`);
      if (found) return found;
    }
    return null;
  }
  for (const [key, inner] of Object.entries(value)) {
    // A key is text too: it may become a name (a setting, a header) somewhere.
    const found = key.includes('\u0000') ? `${where}.${key.replaceAll('\u0000', '\\u0000')}` : nulAt(inner, `${where}.${key}`);
    if (found) return found;
  }
  return null;
}
