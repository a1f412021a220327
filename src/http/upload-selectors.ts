import { z } from 'zod';
import { pickSelector } from '../uploads/upload-plan.ts';
import { requestOptionsShape } from '../uploads/option-fields.ts';

/** The upload options by name, as written in any case: given in the URL, they are refused rather than ignored. */
const optionNames = new Set(Object.keys(requestOptionsShape).map((name) => name.toLowerCase()));

/** Refuses upload options among a route's query parameters, spelled in any case or as `name[]`. */
function refuseOptions(query: Record<string, unknown>, context: z.RefinementCtx): void {
  for (const name of Object.keys(query)) {
    if (optionNames.has(name.toLowerCase().replace(/\[.*$/, ''))) {
      context.addIssue({ code: 'custom', path: [name], message: 'is an upload option: send it as a form field of the upload (or in the JSON body of a chunked upload), not in the URL' });
    }
  }
}

/** The query of a chunked upload's completion: nothing it reads, and no upload option (those go in its body). */
export const completionQuery = z.object({}).catchall(z.unknown()).superRefine(refuseOptions);

/**
 * Selectors may also come as query parameters; other parameters are ignored (uploader tools add their
 * own), except the upload options: a script that puts `?visibility=PRIVATE` or `?password=` in the
 * URL would otherwise publish what it meant to keep private, told nothing (docs/decisions.md,
 * "Upload options in the URL").
 */
export const selectorQuery = z
  .object({ profileId: z.string().max(128).optional(), folderId: z.string().max(128).optional() })
  .catchall(z.unknown())
  .superRefine(refuseOptions)
  .transform(({ profileId, folderId }) => ({ profileId, folderId }));

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
