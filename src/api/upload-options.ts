import { z } from 'zod';

/** Upload options (contract §3): what an upload profile, and the account's upload defaults, can hold. */
export const expirations = { DISABLED: null, HOUR: 3600_000, DAY: 86_400_000, WEEK: 7 * 86_400_000, MONTH: 30 * 86_400_000 } as const;
export type Expiration = keyof typeof expirations;
export const shareStyles = ['minimal', 'framed', 'delivery'] as const;
export type ShareStyle = (typeof shareStyles)[number];
export const MAX_TAGS_PER_UPLOAD = 20;

const profileOptionsShape = {
  visibility: z.enum(['PUBLIC', 'PRIVATE']).optional(),
  expiration: z.enum(Object.keys(expirations) as [Expiration, ...Expiration[]]).optional().describe('How long after upload the expiry action applies'),
  expiryAction: z.enum(['DELETE', 'SET_PRIVATE']).optional(),
  randomizeFileUrls: z.boolean().optional(),
  shareStyle: z.enum(shareStyles).optional(),
  tagIds: z.array(z.string().min(1).max(128)).max(MAX_TAGS_PER_UPLOAD).optional(),
};

/** The options as a request gives them: unknown fields are refused. */
export const profileOptionsInput = z.strictObject(profileOptionsShape);
/** The options as the API answers them. */
export const profileOptionsSchema = z.object(profileOptionsShape).meta({ id: 'ProfileOptions', description: 'Options left out are not set here (the account default or the instance default applies)' });
export type ProfileOptions = z.infer<typeof profileOptionsSchema>;
