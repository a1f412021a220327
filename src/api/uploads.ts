import { z } from 'zod';

/** The result of a finished upload (spec, Resources: Upload links). */
export const uploadLinksSchema = z
  .object({
    url: z.string().describe('`{base_url}/<urlId>/<name>`: the share page'),
    pageUrl: z.string().describe('The same as `url`'),
    rawUrl: z.string().describe('`{base_url}/api/files/<urlId>/<name>`: the bytes'),
    downloadUrl: z.string().describe('`{base_url}/api/files/<file_id>/download`'),
    copyText: z.string().describe('Text to copy'),
    name: z.string(),
    size: z.number().int().describe('Bytes'),
    type: z.string().describe('MIME type'),
  })
  .meta({ id: 'UploadLinks' });
export type UploadLinks = z.infer<typeof uploadLinksSchema>;

/** POST /api/files: `{success: true, data: <upload links>}`. */
export const uploadResponse = z.object({ success: z.literal(true), data: uploadLinksSchema });

/** POST /api/files/chunks (spec: `{data: {uploadId, fileKey}}`, no `success`). */
export const chunkSessionResponse = z.object({
  data: z.object({ uploadId: z.string().describe('`^[a-z0-9]{1,100}$`'), fileKey: z.string().describe('The storage key the file will have') }),
});

/** GET /api/files/chunks: the part upload URL twice, under both names (spec). */
export const partUrlQueryResponse = z.object({
  url: z.string().describe('A presigned URL valid for one hour (object storage), or a `local://` marker: then use the PUT part route'),
  presignedUrl: z.string().describe('The same value as `url`'),
});

/** GET /api/files/chunks/{uploadId}/part/{partNumber}. */
export const partUrlResponse = z.object({ data: z.object({ url: z.string().describe('A presigned URL valid for one hour, or a `local://` marker') }) });

/** PUT /api/files/chunks/{uploadId}/part/{partNumber}. */
export const partResponse = z.object({ data: z.object({ etag: z.string().describe('Goes in the `ETag` field of the part entry at completion') }) });

/** PUT /api/files/chunks: the upload links wrapped in `data`, with no `success` (spec). */
export const wrappedUploadLinksResponse = z.object({ data: uploadLinksSchema });
