import { z } from 'zod';
import { success, timestamp } from './envelope.ts';
import { permissionSchema } from './permissions.ts';

/** A role as an account's access lists it (contract §2). */
export const roleSummarySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    systemKey: z.string().nullable().describe('`everyone` or `administrator` for the built-in roles; null for a custom role'),
  })
  .meta({ id: 'RoleSummary' });
export type RoleSummary = z.infer<typeof roleSummarySchema>;

/** The signed-in account (contract §3, "Sign-in": `GET /api/auth/me`). */
export const meSchema = z
  .object({
    id: z.string(),
    email: z.string(),
    name: z.string(),
    urlId: z.string().describe("The account's segment of its files' share-page and raw URLs (`/<urlId>/<name>`)"),
    emailVerified: z.boolean(),
    permissions: z.array(permissionSchema).describe('Effective permissions: the Everyone role and the assigned roles together, sorted'),
    roles: z.array(roleSummarySchema).describe('The roles that apply to the account, Everyone included, built-in roles first, then by name'),
    twoFactorEnabled: z.boolean().describe('Whether sign-in asks for a two-factor code after the password (contract §8)'),
    passkeyCount: z.number().int().min(0).describe('Passkeys registered on the account (contract §8)'),
  })
  .meta({ id: 'Me' });
export type Me = z.infer<typeof meSchema>;

/** Who may register (contract §3, "Administration"). */
export const registrationSchema = z.enum(['open', 'closed', 'invite']).meta({
  id: 'Registration',
  description: '`open`: anyone may register; `invite`: only with an invite code; `closed`: nobody on their own (an invite code still admits its holder, and the first account, the Administrator, always may)',
});
export type Registration = z.infer<typeof registrationSchema>;

/** What the sign-in screen needs before anyone is signed in (docs/decisions.md, `GET /api/setup`). */
export const setupStatusSchema = z
  .object({
    needsAdministrator: z.boolean().describe('True while no account exists: the next registration creates the Administrator'),
    registration: registrationSchema,
  })
  .meta({ id: 'SetupStatus' });
export type SetupStatus = z.infer<typeof setupStatusSchema>;

/** Registration, sign-in and `GET /api/auth/me`: `data: {user}`. */
export const meResponse = success(z.object({ user: meSchema }));
export const setupStatusResponse = success(setupStatusSchema);

/**
 * Something the account is told until it dismisses it: that an administrator took down one of its
 * files or short links, and why, where they said (docs/decisions.md, "Taking down content").
 */
export const accountNoticeSchema = z
  .object({
    id: z.string(),
    kind: z.enum(['file.take-down', 'link.take-down']).describe('`file.take-down`: an administrator deleted one of your files; `link.take-down`: one of your short links'),
    subject: z.string().describe("The file's name, or the short link's address, as it was then"),
    reason: z.string().nullable().describe('What the administrator gave as the reason; null: none given'),
    createdAt: timestamp,
  })
  .meta({ id: 'AccountNotice' });
export type AccountNotice = z.infer<typeof accountNoticeSchema>;
export const accountNoticeListResponse = success(z.object({ notices: z.array(accountNoticeSchema).describe('Newest first') }));
