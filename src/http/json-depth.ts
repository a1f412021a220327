/**
 * How deeply a JSON request body may nest arrays and objects. No body of the API nests more than a
 * few levels; the limit keeps every walk over a parsed body (the NUL check, the schemas) far from the
 * stack's depth, so a small body of brackets is a 400 like any other malformed body, not a crash.
 */
export const MAX_JSON_DEPTH = 64;

/** Whether the JSON text nests arrays and objects deeper than `limit`; text inside strings does not count. */
export function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // a backslash escapes the next character, a quote included
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}
