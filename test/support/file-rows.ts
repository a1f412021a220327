import type { Insertable } from 'kysely';
import type { FilesTable } from '../../src/db/schema.ts';
import { foldForSearch } from '../../src/shared/search-text.ts';

/**
 * A file row as the application writes one (search columns folded as it folds them), for tests that
 * insert many files at once; `fields` override the defaults. No bytes are stored for it.
 */
export function fileRow(userId: string, id: string, fields: Partial<Insertable<FilesTable>> = {}): Insertable<FilesTable> {
  const name = fields.name ?? id;
  const createdAt = fields.createdAt ?? Date.now();
  return {
    id,
    userId,
    name,
    originalName: name,
    storageKey: `test/${id}`,
    mimeType: 'text/plain',
    size: 1,
    sha256: null,
    visibility: 'PUBLIC',
    passwordHash: null,
    expiresAt: null,
    expiryAction: null,
    folderId: null,
    shareStyle: 'framed',
    ocrText: null,
    ...fields,
    searchName: foldForSearch(name),
    searchOcr: fields.ocrText ? foldForSearch(fields.ocrText) : null,
    createdAt,
    updatedAt: createdAt,
  };
}
