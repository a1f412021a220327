import type { Readable } from 'node:stream';
import type { AppContext } from '../context.ts';
import type { Principal } from '../auth/principal.ts';
import { invalid } from '../errors.ts';
import { StorageLimitError } from '../storage/storage.ts';
import { overLimit, uploadAllowance } from './allowance.ts';
import { commitStored, discardStored, storeBytes, type StoredBytes } from './store-upload.ts';
import type { FileRow } from '../files/file-access.ts';
import { resolveOptions, type UploadPlan } from './upload-plan.ts';
import { parseOptionFields, type OptionFields } from './option-fields.ts';
import { formFileName } from '../shared/naming.ts';

export const FILE_FIELD = 'file';

/**
 * A part of a multipart body as the upload reads it: the fields of the HTTP layer's parser this
 * module uses, so the domain depends on no parser.
 */
export type UploadPart =
  | { type: 'field'; fieldname: string; value: unknown; valueTruncated: boolean; fieldnameTruncated: boolean }
  | { type: 'file'; fieldname: string; filename: string; mimetype: string; file: Readable };

/** The form's shape (busboy's limits): the bytes and sizes themselves are bounded by the allowance. */
export const UPLOAD_FORM_LIMITS = { files: 2, fields: 30, fieldSize: 64 * 1024, parts: 40 } as const;
/** The most a form's fields, part headers and delimiters can add to its file's bytes. */
const FORM_ROOM = UPLOAD_FORM_LIMITS.fields * UPLOAD_FORM_LIMITS.fieldSize + UPLOAD_FORM_LIMITS.parts * 2048;

/**
 * POST /api/files after authentication and planning: the `file` part is piped straight to storage
 * (never held in memory), then committed. Option fields may come before or after the file; fields
 * before it are checked before any byte is stored.
 *
 * `declaredLength`: the request's Content-Length, if it has one. One larger than the allowance and
 * the form's room is refused before a byte is stored: the temporary file of each such upload grew
 * to the allowance first (six parallel uploads of an account with 10 MiB left held 50 MB on disk).
 */
export async function receiveSingleUpload(ctx: AppContext, principal: Principal, plan: UploadPlan, parts: AsyncIterable<UploadPart>, declaredLength: number | null = null): Promise<FileRow> {
  const fields: OptionFields = {};
  const allowance = await uploadAllowance(ctx.db, principal);
  if (declaredLength !== null && declaredLength > allowance.maxBytes + FORM_ROOM) throw overLimit(allowance);
  let stored: { bytes: StoredBytes; fileName: string; declared: string | undefined } | null = null;

  try {
    for await (const part of parts) {
      if (part.type === 'field') {
        // `curl -F "file=<notes.txt"` sends the file's text as a field, not a file: said so, with
        // the way to send a file, rather than "no file part named file".
        if (part.fieldname === FILE_FIELD) throw invalid(`"${FILE_FIELD}" came as a text field, not a file part (one with a filename): send the file as a file (curl: -F "${FILE_FIELD}=@path")`);
        collectField(fields, part);
        continue;
      }
      const file = part;
      if (file.fieldname !== FILE_FIELD) {
        file.file.resume();
        throw invalid(`The file part must be named "${FILE_FIELD}"; ${file.fieldname ? `it is named "${file.fieldname}"` : 'it has no name'}`);
      }
      if (stored) {
        file.file.resume();
        throw invalid('Send exactly one file per request');
      }
      // Options known so far are checked before the bytes are read.
      await resolveOptions(ctx.db, principal, plan, parseOptionFields(fields));
      try {
        const bytes = await storeBytes(ctx, principal.user.id, file.file, { maxBytes: allowance.maxBytes, contentType: file.mimetype });
        stored = { bytes, fileName: formFileName(file.filename || 'file'), declared: file.mimetype || undefined };
      } catch (error) {
        if (error instanceof StorageLimitError) throw overLimit(allowance);
        throw error;
      }
    }
    if (!stored) throw invalid(`The request has no file part named "${FILE_FIELD}"`);
    const options = await resolveOptions(ctx.db, principal, plan, parseOptionFields(fields));
    const { bytes, fileName, declared } = stored;
    // Committed, or its bytes removed by commitStored: either way no longer this function's to clean.
    stored = null;
    return await commitStored(ctx, principal, bytes, { name: fileName, declaredType: declared, declaredByMultipart: true, folderId: plan.folderId, options });
  } catch (error) {
    if (stored) await discardStored(ctx, stored.bytes);
    throw error;
  }
}

function collectField(fields: OptionFields, part: Extract<UploadPart, { type: 'field' }>): void {
  if (typeof part.value !== 'string') throw invalid(`${part.fieldname}: must be a text field`);
  if (Object.hasOwn(fields, part.fieldname)) throw invalid(`${part.fieldname}: given twice`);
  // The parser keeps only the first `fieldSize` bytes of a field (see src/http/routes/file-upload.ts); a value cut
  // short (a password, say) must not be used as if it were what the client sent.
  if (part.valueTruncated || part.fieldnameTruncated) throw invalid(`${part.fieldname}: the field is too long`);
  fields[part.fieldname] = part.value;
}
