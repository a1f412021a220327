/**
 * The Cache-Control of an answer anyone may read (a public file's bytes, page or thumbnail): kept
 * by caches for `maxAgeSeconds`, but never past the file's expiry, after which Hoard answers 404 and
 * a cache would still hand out the bytes (docs/decisions.md, "Caches and expiry").
 */
export function publicCaching(file: { expiresAt: number | null }, maxAgeSeconds: number, now = Date.now()): string {
  if (file.expiresAt === null) return `public, max-age=${maxAgeSeconds}`;
  const left = Math.floor((file.expiresAt - now) / 1000);
  return left >= 1 ? `public, max-age=${Math.min(maxAgeSeconds, left)}` : 'no-store';
}
