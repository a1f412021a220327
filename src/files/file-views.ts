import type { FilesTable, MediaStatus } from '../db/schema.ts';
import { thumbnailUrl } from '../media/media-kinds.ts';
import type { FileRecord } from '../api/files.ts';
import type { UploadLinks } from '../api/uploads.ts';
import { byName } from '../shared/name-order.ts';

type FileFields = Pick<FilesTable, 'id' | 'name' | 'mimeType' | 'size'>;

export function urlPathOf(urlId: string, name: string): string {
  return `/${urlId}/${name}`;
}

/** Links as returned by a finished upload (spec, Upload links); `size` in bytes. */
export function uploadLinks(baseUrl: string, urlId: string, file: FileFields): UploadLinks {
  const segment = encodeURIComponent(file.name);
  const url = `${baseUrl}/${urlId}/${segment}`;
  return {
    url,
    pageUrl: url,
    rawUrl: `${baseUrl}/api/files/${urlId}/${segment}`,
    downloadUrl: `${baseUrl}/api/files/${file.id}/download`,
    copyText: url,
    name: file.name,
    size: file.size,
    type: file.mimeType,
  };
}


const MiB = 1024 * 1024;

export interface FileRecordSource extends Pick<FilesTable, 'id' | 'name' | 'mimeType' | 'size' | 'visibility' | 'folderId' | 'expiresAt' | 'expiryAction' | 'createdAt' | 'thumbnailKey'> {
  thumbnailStatus: MediaStatus;
  ocrStatus: MediaStatus;
  views: number;
  downloads: number;
  hasPassword: boolean;
}

/** An item of the file listing (spec, File record): size in MiB, never the password hash. */
export function fileRecord(file: FileRecordSource, urlId: string, tags: FileRecord['tags'], baseUrl: string): FileRecord {
  return {
    id: file.id,
    name: file.name,
    urlPath: urlPathOf(urlId, file.name),
    mimeType: file.mimeType,
    size: file.size / MiB,
    uploadedAt: new Date(file.createdAt).toISOString(),
    visibility: file.visibility,
    views: file.views,
    downloads: file.downloads,
    folderId: file.folderId,
    user: { urlId },
    // In the tag list's order, whichever query read them (the database's order follows its collation).
    tags: tags.length > 1 ? [...tags].sort(byName) : tags,
    hasPassword: file.hasPassword,
    expiresAt: file.expiresAt === null ? null : new Date(file.expiresAt).toISOString(),
    expiryAction: file.expiresAt === null ? null : file.expiryAction,
    thumbnailUrl: thumbnailUrl(baseUrl, file),
    thumbnailStatus: file.thumbnailStatus,
    ocrStatus: file.ocrStatus,
  };
}
