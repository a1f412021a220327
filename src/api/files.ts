import { z } from 'zod';
import { success, timestamp } from './envelope.ts';

/**
 * The file listing (spec, GET /api/files, /types, /timeline) and the file record the owner's routes
 * answer with. These schemas stay plain objects, with no refinement or transform: the listing is the
 * API's busiest answer.
 */

/** A tag as a file carries it: only the tags that count (not excluded), sorted by name. */
export const fileTagSchema = z.object({ id: z.string(), name: z.string() }).meta({ id: 'FileTag' });
export type FileTag = z.infer<typeof fileTagSchema>;

/** Where a file's thumbnail or recognised text stands (contract §10). */
export const mediaStatusSchema = z.enum(['pending', 'done', 'failed', 'unsupported', 'disabled']).meta({ id: 'MediaStatus' });
export type MediaStatus = z.infer<typeof mediaStatusSchema>;

/** An item of the file listing (spec, Resources: File record). */
export const fileRecordSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    urlPath: z.string().describe('`/<urlId>/<name>`: the share page is `{base_url}<urlPath>`, the raw bytes `{base_url}/api/files<urlPath>`'),
    mimeType: z.string(),
    size: z.number().describe('MiB (fractional), not bytes'),
    uploadedAt: timestamp,
    visibility: z.enum(['PUBLIC', 'PRIVATE']).describe('A password is `hasPassword`, not a visibility'),
    views: z.number().int(),
    downloads: z.number().int(),
    folderId: z.string().nullable().describe('null: unfiled'),
    user: z.object({ urlId: z.string() }).describe("The owner's URL ID, the first segment of `urlPath`"),
    tags: z.array(fileTagSchema),
    hasPassword: z.boolean(),
    expiresAt: timestamp.nullable().describe('When the expiry action applies; null: never'),
    expiryAction: z.enum(['DELETE', 'SET_PRIVATE']).nullable().describe('What happens at `expiresAt`: the file is deleted or made private; null without an expiry'),
    thumbnailUrl: z.string().nullable().describe('A WebP thumbnail, longest side at most 512 px (contract §10); null while there is none'),
    thumbnailStatus: mediaStatusSchema.describe('Whether a thumbnail is on its way (`pending`), made (`done`), or will not come, and why'),
    ocrStatus: mediaStatusSchema.describe('The same for the recognised text: `done` when `search` matches it'),
  })
  .meta({ id: 'FileRecord' });
export type FileRecord = z.infer<typeof fileRecordSchema>;

export const paginationSchema = z
  .object({
    total: z.number().int().describe('Files the filters select'),
    pageCount: z.number().int(),
    page: z.number().int(),
    limit: z.number().int().describe('Page size (at most 100)'),
    offset: z.number().int().optional().describe('Only on a gallery (anchored) answer: position of the first returned image among the selected images'),
  })
  .meta({ id: 'Pagination' });
export type Pagination = z.infer<typeof paginationSchema>;

/** GET /api/files: the page, with its pagination beside `data` (spec, GET /api/files). */
export const fileListResponse = success(z.array(fileRecordSchema)).extend({ pagination: paginationSchema });
export type FileListResponse = z.infer<typeof fileListResponse>;

/** GET /api/files/{id}/ocr (contract §10). */
export const fileOcrResponse = success(
  z.object({
    status: mediaStatusSchema,
    text: z.string().nullable().describe('The recognised text once `status` is `done` (possibly empty: no text found); null before'),
  }),
);
export type FileOcr = z.infer<typeof fileOcrResponse>['data'];

/** PATCH /api/files/{id}: the file as the listing shows it after the change. */
export const fileResponse = success(z.object({ file: fileRecordSchema }));

export const fileTypesResponse = success(z.object({ types: z.array(z.string()).describe("The account's distinct MIME types, in code-point order; not an allowlist") }));
export type FileTypesResponse = z.infer<typeof fileTypesResponse>;

/** Calendar groupings of the timeline: `none` counts by month too but is echoed as `none`. */
export const timelineGroupings = ['none', 'month', 'week', 'year'] as const;

/** A nonempty calendar bucket of the timeline (contract §4, "Timeline data"). */
export const timelineBucketSchema = z
  .object({
    key: z.string().describe('`YYYY-MM` (month), `YYYY-Www` (ISO week), `YYYY` (year), or `all`: the single undated bucket of a non-date sort'),
    from: timestamp.describe('Inclusive'),
    to: timestamp.describe('Exclusive'),
    count: z.number().int(),
  })
  .meta({ id: 'TimelineBucket' });
export type TimelineBucket = z.infer<typeof timelineBucketSchema>;

/** GET /api/files/timeline (contract §4, "Timeline data"). */
export const timelineSchema = z
  .object({
    total: z.number().int().describe('Files counted: the sum of the buckets'),
    snapshot: timestamp.describe('Upload-time ceiling of the counts: pass it unchanged as `snapshot` to GET /api/files to read a window'),
    groupBy: z.enum(timelineGroupings),
    timezone: z.string().describe('IANA time zone of the calendar boundaries'),
    order: z.enum(['newest', 'oldest']),
    buckets: z.array(timelineBucketSchema).describe('The nonempty buckets, in `order`'),
  })
  .meta({ id: 'Timeline' });
export type Timeline = z.infer<typeof timelineSchema>;

export const timelineResponse = success(timelineSchema);
