import type { FileRecord } from '@api';

const segment = (name: string) => encodeURIComponent(name);

/** The share page (`/<urlId>/<name>`), absolute. */
export const shareUrl = (file: FileRecord) => `${window.location.origin}/${file.user.urlId}/${segment(file.name)}`;
/** The raw bytes (`/api/files/<urlId>/<name>`); counts a view. */
export const rawPath = (file: FileRecord) => `/api/files/${file.user.urlId}/${segment(file.name)}`;
/** The owner's own file for previews in this app (`/api/files/<id>/preview`); counts no view. */
export const previewPath = (file: FileRecord) => `/api/files/${encodeURIComponent(file.id)}/preview`;
/**
 * The thumbnail (WebP, at most 512 px) as a path on this origin, or null while there is none. The
 * listing gives an absolute URL built on BASE_URL, but the page may be open under another address
 * (a LAN IP, a second host name) where the app's CSP (img-src 'self') and the session cookie only
 * hold for its own origin.
 */
export function thumbnailPath(file: Pick<FileRecord, 'thumbnailUrl'>): string | null {
  if (!file.thumbnailUrl) return null;
  const url = new URL(file.thumbnailUrl, window.location.origin);
  return url.pathname + url.search;
}
/** As an attachment; counts a download. */
export const downloadPath = (file: FileRecord) => `/api/files/${encodeURIComponent(file.id)}/download`;

export const isImage = (file: Pick<FileRecord, 'mimeType'>) => file.mimeType.startsWith('image/');
/** Images a browser shows in an <img> without running anything (SVG is served as a download). */
export const isPreviewable = (file: Pick<FileRecord, 'mimeType'>) => isImage(file) && file.mimeType !== 'image/svg+xml';

/** The types the archive routes read (ZIP, tar, tar.gz); the server decides from the bytes. */
const archiveTypes = new Set(['application/zip', 'application/x-zip-compressed', 'application/x-tar', 'application/gzip', 'application/x-gzip', 'application/x-compressed-tar', 'application/x-gtar']);
/**
 * Whether to offer "Contents" for a file: an archive type, or an archive name stored under a generic
 * type. A gzip file that holds no tar is answered with a 400, which the contents dialog shows.
 */
export const isArchive = (file: Pick<FileRecord, 'name' | 'mimeType'>) =>
  archiveTypes.has(file.mimeType) || (file.mimeType === 'application/octet-stream' && /\.(zip|tar|tgz|tar\.gz)$/i.test(file.name));

/** A short type label for files without a preview: the name's extension, else the MIME subtype. */
export function typeLabel(file: Pick<FileRecord, 'name' | 'mimeType'>): string {
  const extension = /\.([A-Za-z0-9]{1,5})$/.exec(file.name)?.[1];
  const label = extension ?? file.mimeType.split('/')[1]?.split(/[.+;-]/)[0] ?? 'file';
  return label.slice(0, 5).toUpperCase();
}
