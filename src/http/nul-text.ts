/**
 * Text with a NUL character (U+0000) is refused with a 400 wherever a request carries it: a path
 * parameter, a query parameter, a string anywhere in a JSON body. PostgreSQL cannot store it in
 * text, nor compare a column with it, so every such request failed there as a server error (an ID
 * in a path, a name in a body, an email at sign-in); SQLite's full-text query syntax ends a quoted
 * phrase at it; and no browser form, file name or header can carry one. Checked once for every
 * route, before its handler (docs/decisions.md, "Errors").
 */

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

/** The message of the 400, or null when the request carries no NUL character. */
export function nulProblem(request: { params: unknown; query: unknown; body: unknown }): string | null {
  const where = nulAt(request.params, 'path') ?? nulAt(request.query, 'query') ?? nulAt(request.body, 'body');
  return where === null ? null : `${where}: text must not contain the NUL character (U+0000)`;
}
