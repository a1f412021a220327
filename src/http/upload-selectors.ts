import { z } from 'zod';
import { pickSelector } from '../uploads/upload-plan.ts';

/** Selectors may also come as query parameters; other parameters are ignored (uploader tools add their own). */
export const selectorQuery = z.object({ profileId: z.string().max(128).optional(), folderId: z.string().max(128).optional() });

/** The same selectors as headers (documented only: selectorsOf reads them, and checks they agree). */
export const selectorHeaders = z.object({
  'x-upload-profile': z.string().max(128).optional().describe('An owned upload profile ID, or "none"; must agree with profileId'),
  'x-upload-folder': z.string().max(128).optional().describe('An owned folder ID, or "none" for unfiled; must agree with folderId'),
});

/** The upload profile and folder an upload (single or chunked) names, by header or query parameter. */
export function selectorsOf(request: { headers: Record<string, string | string[] | undefined>; query: z.infer<typeof selectorQuery> }) {
  return {
    profile: pickSelector('X-Upload-Profile', request.headers['x-upload-profile'], request.query.profileId),
    folder: pickSelector('X-Upload-Folder', request.headers['x-upload-folder'], request.query.folderId),
  };
}
