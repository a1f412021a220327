import type { MediaStatus } from '../db/schema.ts';
import { randomLowerAlnum } from '../db/ids.ts';

/**
 * What media work a file gets (contract §10): thumbnails of images, videos and PDFs, text
 * recognition of images. Decided by the stored MIME type, which uploads derive from the bytes first.
 */
export type ThumbnailSource = 'image' | 'video' | 'pdf';

/** Image types sharp reads; GIFs give their first frame, TIFFs their first page. */
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif', 'image/tiff']);

export function thumbnailSourceOf(mimeType: string): ThumbnailSource | null {
  const type = mimeType.split(';', 1)[0]!.trim().toLowerCase();
  if (IMAGE_TYPES.has(type)) return 'image';
  if (type.startsWith('video/')) return 'video';
  if (type === 'application/pdf') return 'pdf';
  return null;
}

export function recognisesText(mimeType: string): boolean {
  return thumbnailSourceOf(mimeType) === 'image';
}

/** The statuses a file starts with: work to do is `pending` when its setting is on. */
export function initialMediaStatus(mimeType: string, settings: { thumbnailsEnabled: boolean; ocrEnabled: boolean }): { thumbnailStatus: MediaStatus; ocrStatus: MediaStatus } {
  const status = (supported: boolean, enabled: boolean): MediaStatus => (!supported ? 'unsupported' : enabled ? 'pending' : 'disabled');
  return {
    thumbnailStatus: status(thumbnailSourceOf(mimeType) !== null, settings.thumbnailsEnabled),
    ocrStatus: status(recognisesText(mimeType), settings.ocrEnabled),
  };
}

/**
 * A thumbnail's storage key: derived from the file's own key (so an operator sees which file it
 * belongs to) plus a version, so that a remade thumbnail has a new key and a new ETag, and a cached
 * `?v=` URL never shows the old one.
 */
export function newThumbnailKey(storageKey: string): string {
  return `${storageKey}.thumb-${randomLowerAlnum(10)}.webp`;
}

/** The version in a thumbnail key (its ETag and the `v` of its URL). */
export function thumbnailVersion(thumbnailKey: string): string {
  return /\.thumb-([a-z0-9]+)\.webp$/.exec(thumbnailKey)?.[1] ?? 'v';
}

/** The listing's `thumbnailUrl`: null until a thumbnail exists. */
export function thumbnailUrl(baseUrl: string, file: { id: string; thumbnailStatus: MediaStatus; thumbnailKey: string | null }): string | null {
  if (file.thumbnailStatus !== 'done' || file.thumbnailKey === null) return null;
  return `${baseUrl}/api/files/${file.id}/thumbnail?v=${thumbnailVersion(file.thumbnailKey)}`;
}
