import { z } from 'zod';
import { invalid } from '../errors.ts';
import { INSTANT_RULE, instantOf, isInstant } from '../shared/instants.ts';
import { nulAt, nulMessage } from '../shared/nul-text.ts';
import { profileOptionsSchema, type RequestOptions } from '../shared/upload-options.ts';

/**
 * Upload option fields as JSON values (the chunked-upload body uses them as they are). `expiresAt`
 * null or "" is an explicit "no expiry" (contract §4).
 */
export const requestOptionsShape = {
  ...profileOptionsSchema.shape,
  password: z.string().max(1024).optional(),
  // One schema rather than a union, whose refusal of a number or an array said only "Invalid input".
  expiresAt: z
    .string({ error: `${INSTANT_RULE}, or null` })
    .nullable()
    .refine((value) => value === null || value === '' || isInstant(value), { message: `${INSTANT_RULE}, or null` })
    .meta({ format: 'date-time' })
    .optional(),
};

export function toRequestOptions(values: z.infer<z.ZodObject<typeof requestOptionsShape>>): RequestOptions {
  const { expiresAt, password, ...rest } = values;
  // Both say when the file expires; taking one silently would store an expiry the client did not
  // mean half the time (docs/decisions.md, "One expiry per upload request").
  if (expiresAt !== undefined && rest.expiration !== undefined) throw invalid('Send either expiration (a preset) or expiresAt (an instant, or null for none), not both');
  const options: RequestOptions = { ...rest };
  if (expiresAt !== undefined) options.expiresAt = expiresAt === null || expiresAt === '' ? null : instantOf(expiresAt);
  if (password !== undefined && password !== '') options.password = password;
  return options;
}

/** Multipart text fields by name. */
export type OptionFields = Record<string, string>;

const fieldSchema = z.strictObject(requestOptionsShape);

/** Multipart text fields to typed options; every value arrives as a string. */
export function parseOptionFields(fields: OptionFields): RequestOptions {
  const values: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(fields)) {
    const nul = nulAt({ [name]: raw }, 'fields');
    if (nul !== null) throw invalid(nulMessage(nul));
    if (name === 'randomizeFileUrls') values[name] = parseBoolean(raw);
    else if (name === 'tagIds') values[name] = parseTagIds(raw);
    else if (name === 'expiresAt') values[name] = raw === 'null' ? null : raw;
    else values[name] = raw;
  }
  const result = fieldSchema.safeParse(values);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    if (issue.code === 'unrecognized_keys') throw invalid(`Unknown upload field ${issue.keys.map((k) => `"${k}"`).join(', ')}`);
    throw invalid(`${issue.path.join('.') || 'fields'}: ${issue.message}`);
  }
  return toRequestOptions(result.data);
}

function parseBoolean(raw: string): unknown {
  const value = raw.trim().toLowerCase();
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  return raw;
}

function parseTagIds(raw: string): unknown {
  const text = raw.trim();
  if (text === '') return [];
  if (text.startsWith('[')) {
    try {
      return JSON.parse(text);
    } catch {
      throw invalid('tagIds: must be a JSON array of tag IDs');
    }
  }
  return text.split(',').map((id) => id.trim()).filter(Boolean);
}
