import { z } from 'zod';
import { success, timestamp } from './envelope.ts';
import { scopeSchema } from './scopes.ts';

/** The states of a named token (spec, States and transitions: Named token). */
export const tokenStatuses = ['active', 'expired', 'revoked'] as const;
export type TokenStatus = (typeof tokenStatuses)[number];

/** A named API token's record (contract §3, "Named tokens"); never its secret. */
export const tokenRecordSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    scopes: z.array(scopeSchema),
    profileId: z.string().nullable().describe('The upload profile the token is bound to (tokens with files:upload only)'),
    expiresAt: timestamp.nullable().describe('When the token stops working; null: until revoked'),
    revokedAt: timestamp.nullable(),
    lastUsedAt: timestamp.nullable().describe('Best effort: when the token last authorized a request'),
    createdAt: timestamp,
    status: z.enum(tokenStatuses),
  })
  .meta({ id: 'TokenRecord' });
export type TokenRecord = z.infer<typeof tokenRecordSchema>;

/** A token just created or rotated, with its secret: shown in this answer only. */
export const createdTokenResponse = success(
  z.object({
    token: tokenRecordSchema,
    secret: z.string().describe('The token (`svc_…`), sent as `Authorization: Bearer <secret>`; shown only in this answer'),
  }),
);
export const tokenListResponse = success(
  z.object({
    tokens: z.array(tokenRecordSchema).describe('The latest 100 records, newest first, revoked and expired included'),
    olderActive: z.array(tokenRecordSchema).describe('Active tokens older than the latest 100 records, newest first (usually none): every token that still works is listed'),
    activeCount: z.number().int().describe('Active tokens of the account'),
    limit: z.number().int().describe('Most active tokens an account may have'),
  }),
);
export type TokenList = z.infer<typeof tokenListResponse>['data'];

/** The account's legacy upload credential (contract §3, "Legacy upload credential"). */
export const uploadTokenResponse = success(z.object({ uploadToken: z.string().describe('Sent as `Authorization: Bearer <uploadToken>`') }));

/** The ShareX custom uploader (`.sxcu`) that GET /api/profile/sharex downloads; it embeds the legacy credential. */
export const shareXUploaderSchema = z
  .object({
    Version: z.string(),
    Name: z.string(),
    DestinationType: z.string(),
    RequestMethod: z.literal('POST'),
    RequestURL: z.string(),
    Headers: z.object({ Authorization: z.string() }),
    Body: z.literal('MultipartFormData'),
    FileFormName: z.string(),
    URL: z.string(),
    ThumbnailURL: z.string(),
    ErrorMessage: z.string(),
  })
  .meta({ id: 'ShareXUploader' });
export type ShareXUploader = z.infer<typeof shareXUploaderSchema>;

/** The ShareX URL shortener (`.sxcu`) that GET /api/profile/sharex-shortener downloads; it embeds the legacy credential. */
export const shareXShortenerSchema = z
  .object({
    Version: z.string(),
    Name: z.string(),
    DestinationType: z.literal('URLShortener'),
    RequestMethod: z.literal('POST'),
    RequestURL: z.string(),
    Headers: z.object({ Authorization: z.string() }),
    Body: z.literal('JSON'),
    Data: z.string().describe('The JSON body, with `{input}` where ShareX puts the URL to shorten'),
    URL: z.string(),
    ErrorMessage: z.string(),
  })
  .meta({ id: 'ShareXShortener' });
export type ShareXShortener = z.infer<typeof shareXShortenerSchema>;
