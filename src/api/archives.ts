import { z } from 'zod';
import { success, timestamp } from './envelope.ts';
import { uploadLinksSchema } from './uploads.ts';

/** An entry of an archive's manifest (contract §9). */
export const archiveEntrySchema = z
  .object({
    path: z.string().describe('As stored, with `\\` turned into `/`; a directory without its trailing `/`'),
    size: z.number().int().describe('Uncompressed bytes'),
    compressedSize: z.number().int().describe('Stored bytes in a ZIP; equals `size` in a tar'),
    directory: z.boolean(),
    modifiedAt: timestamp.nullable().describe("A ZIP's MS-DOS time is read as UTC unless an extended timestamp is present"),
    encrypted: z.boolean().describe('Listed, never extracted'),
  })
  .meta({ id: 'ArchiveEntry' });
export type ArchiveEntry = z.infer<typeof archiveEntrySchema>;

export const archiveManifestSchema = z
  .object({
    format: z.enum(['zip', 'tar']),
    entryCount: z.number().int().describe('Every entry, also beyond the listed ones'),
    totalSize: z.number().int().describe('The uncompressed sizes of every file entry'),
    truncated: z.boolean().describe('More than 10,000 entries: only the first 10,000 are listed'),
    entries: z.array(archiveEntrySchema),
  })
  .meta({ id: 'ArchiveManifest' });
export type ArchiveManifest = z.infer<typeof archiveManifestSchema>;

export const archiveManifestResponse = success(archiveManifestSchema);

/** An entry extraction left out, and why (contract §9). */
export const skippedEntrySchema = z
  .object({
    path: z.string().describe('The entry path as the manifest lists it; empty for damage between entries, whose names cannot be read'),
    reason: z.string().describe('Why it was not extracted: encrypted, too large, over the quota, larger than it declared, a directory, not in the archive…'),
  })
  .meta({ id: 'SkippedEntry' });
export type SkippedEntry = z.infer<typeof skippedEntrySchema>;

/** POST /api/archives/{fileId}/extract: the new files, and the entries left out. */
export const archiveExtractionSchema = z
  .object({
    files: z.array(uploadLinksSchema).describe('One new file per extracted entry, in archive order'),
    skipped: z.array(skippedEntrySchema),
  })
  .meta({ id: 'ArchiveExtraction' });
export type ArchiveExtraction = z.infer<typeof archiveExtractionSchema>;
export const archiveExtractionResponse = success(archiveExtractionSchema);

/** POST /api/archives: the new ZIP file's upload links. */
export const archiveCreatedResponse = success(uploadLinksSchema);
