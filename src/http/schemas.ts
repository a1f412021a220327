import { z } from 'zod';
import { MIN_PASSWORD_LENGTH } from '../auth/passwords.ts';

/** Path parameter for a record ID; anything longer or stranger cannot be one of ours. */
export const idParams = z.strictObject({ id: z.string().min(1).max(128) });

export const isoDateTime = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 timestamp with a time zone' });

/** Account fields: sign-up, the administrators' account routes and the account's own settings. */
export const emailSchema = z.email({ message: 'must be an email address' }).max(254);
export const passwordSchema = z.string().min(MIN_PASSWORD_LENGTH, { message: `must be at least ${MIN_PASSWORD_LENGTH} characters` }).max(1024);
