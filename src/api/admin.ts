import { z } from 'zod';
import { success, timestamp } from './envelope.ts';
import { permissionSchema } from './permissions.ts';
import { registrationSchema, roleSummarySchema } from './accounts.ts';

/** An account as the administration lists it (contract §3, "Administration"). */
export const adminUserSchema = z
  .object({
    id: z.string(),
    email: z.string(),
    name: z.string(),
    urlId: z.string(),
    emailVerified: z.boolean(),
    quotaBytes: z.number().int().nullable().describe("The account's own storage quota in bytes (0: no quota); null: the instance's default quota applies"),
    usedBytes: z.number().int().describe("Bytes of the account's files, which its quota counts (room held by unfinished chunked uploads aside)"),
    fileCount: z.number().int().describe('How many files the account has'),
    roles: z.array(roleSummarySchema).describe('The roles assigned to the account, by name (Everyone applies to every account without being assigned)'),
    roleIds: z.array(z.string()).describe('The IDs of `roles`, in the same order'),
    twoFactorEnabled: z.boolean().describe('Whether the account signs in with a two-factor code; an administrator can turn it off (DELETE /api/users/{id}/two-factor, contract §8)'),
    quotaAppliedBytes: z
      .number()
      .int()
      .nullable()
      .describe("The quota the account is held to now: its own, else the default, which an account holding quotas.bypass is exempt from; null: none. `usedBytes` above it means its uploads are refused"),
    suspendedAt: timestamp.nullable().describe('When an administrator suspended the account (it cannot sign in; its tokens and legacy credential are refused; nothing is deleted); null: not suspended'),
    createdAt: timestamp,
  })
  .meta({ id: 'AdminUser' });
export type AdminUser = z.infer<typeof adminUserSchema>;

/** A role (contract §2): the built-in Everyone and Administrator, or one an administrator made. */
export const roleSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    systemKey: z.string().nullable().describe('`everyone` or `administrator` for the built-in roles; null for a custom role'),
    builtin: z.boolean().describe('Built-in roles can be edited but not deleted'),
    permissions: z.array(permissionSchema),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'Role' });
export type Role = z.infer<typeof roleSchema>;

/** The instance settings (contract §3, "Administration"). */
export const instanceSettingsSchema = z
  .object({
    registration: registrationSchema,
    requireEmailVerification: z.boolean().describe('When true, an account whose email is not verified cannot use named tokens or the legacy credential'),
    maxUploadSizeBytes: z.number().int().describe('Largest file one upload may store, in bytes'),
    defaultQuotaBytes: z.number().int().describe('Storage quota, in bytes, of an account without one of its own; 0: no quota'),
    thumbnailsEnabled: z.boolean().describe('Make thumbnails of new images, videos and PDFs; turning it on makes those of existing files too, paced'),
    ocrEnabled: z.boolean().describe('Recognise the text of new images (searchable); turning it on recognises existing images too, paced'),
  })
  .meta({ id: 'InstanceSettings' });
export type InstanceSettings = z.infer<typeof instanceSettingsSchema>;

/** A single-use invite code (docs/decisions.md, Administration). */
export const inviteSchema = z
  .object({
    id: z.string(),
    code: z.string().describe('What the invited person enters as `inviteCode` when registering'),
    createdAt: timestamp,
    expiresAt: timestamp,
    usedAt: timestamp.nullable().describe('When an account was registered with it; null: not used yet'),
    createdBy: z.object({ id: z.string(), email: z.string() }).nullable().describe('The account that made it; null once that account is deleted (its unused invites go with it)'),
    usedBy: z.object({ id: z.string(), email: z.string() }).nullable().describe('The account registered with it, while that account exists'),
    note: z.string().nullable().describe('What its maker noted on it (who it is for); null: no note'),
  })
  .meta({ id: 'Invite' });
export type Invite = z.infer<typeof inviteSchema>;

/** A record of a request authorized by a named token or the legacy credential (docs/decisions.md, Audit records); never a secret. */
export const auditRecordSchema = z
  .object({
    id: z.string(),
    at: timestamp,
    user: z.object({ id: z.string(), email: z.string() }).describe('The account the credential belongs to'),
    credential: z.enum(['token', 'legacy']),
    token: z
      .object({ id: z.string(), name: z.string().nullable().describe("The token's current name (a revoked token keeps it); null when the token record no longer exists") })
      .nullable()
      .describe('The named token; null for the legacy credential'),
    operation: z.string().describe("The route's permission"),
    route: z.string(),
    status: z.number().int().describe('The HTTP status of the answer'),
    ip: z.string().nullable().describe("The client's IP address"),
  })
  .meta({ id: 'AuditRecord' });
export type AuditRecord = z.infer<typeof auditRecordSchema>;

/** One page of audit records, newest first. */
export const auditPageSchema = z
  .object({
    records: z.array(auditRecordSchema),
    nextBefore: z.string().nullable().describe('Pass as `before` for the next (older) page; null on the last page'),
  })
  .meta({ id: 'AuditPage' });
export type AuditPage = z.infer<typeof auditPageSchema>;

/**
 * What an administrator can do to what is not their own, one name each: the administration log's
 * vocabulary (docs/decisions.md, "The administration log").
 */
export const adminActionKinds = [
  'account.create',
  'account.change',
  'account.delete',
  'account.two-factor-reset',
  'role.create',
  'role.change',
  'role.delete',
  'settings.change',
  'invite.create',
  'invite.withdraw',
  'file.take-down',
  'link.take-down',
] as const;
export type AdminActionKind = (typeof adminActionKinds)[number];

const changeValue = z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(z.string())]);
/** One field of what an administrator changed: its value before and after, where it had one. */
export const adminChangeSchema = z
  .object({
    field: z.string().describe('What changed: `email`, `name`, `roles`, `quotaBytes`, `password`, `suspended`, `permissions`, a setting\'s name…'),
    from: changeValue.optional().describe('Its value before; absent for something made'),
    to: changeValue.optional().describe('Its value after; absent for something removed, and for a new password, which is never recorded'),
  })
  .meta({ id: 'AdminChange' });
export type AdminChange = z.infer<typeof adminChangeSchema>;

/** A change an administrator made to another account, a role, the settings, an invite or another account's content. */
export const adminActionSchema = z
  .object({
    id: z.string(),
    at: timestamp,
    actor: z.object({ id: z.string(), email: z.string() }).describe('Who made the change, by the email the account had then'),
    action: z.enum(adminActionKinds),
    target: z
      .object({
        id: z.string().nullable().describe("The account's, role's, invite's, file's or short link's ID; null for the instance's settings"),
        label: z.string().describe('The target as it was named then: an email, a role\'s name, an invite\'s note, a file\'s name, a short link\'s address'),
      })
      .describe('What was changed; it may no longer exist'),
    changes: z.array(adminChangeSchema).describe('What changed, field by field; empty where the action says it all (a deletion, a two-factor reset)'),
  })
  .meta({ id: 'AdminAction' });
export type AdminAction = z.infer<typeof adminActionSchema>;

/** One page of the administration log, newest first. */
export const adminActionPageSchema = z
  .object({
    actions: z.array(adminActionSchema),
    nextBefore: z.string().nullable().describe('Pass as `before` for the next (older) page; null on the last page'),
  })
  .meta({ id: 'AdminActionPage' });
export type AdminActionPage = z.infer<typeof adminActionPageSchema>;
export const adminActionPageResponse = success(adminActionPageSchema);

export const adminUserListResponse = success(z.object({ users: z.array(adminUserSchema) }));
export const adminUserResponse = success(z.object({ user: adminUserSchema }));
export const roleListResponse = success(
  z.object({
    roles: z.array(roleSchema).describe('Built-in roles first, then by name'),
    permissions: z.array(permissionSchema).describe("The whole permission vocabulary, in its groups' order"),
  }),
);
export const roleResponse = success(z.object({ role: roleSchema }));
export const instanceSettingsResponse = success(instanceSettingsSchema);

const mediaStatusCounts = z
  .object({ pending: z.number().int(), done: z.number().int(), failed: z.number().int(), unsupported: z.number().int(), disabled: z.number().int() })
  .describe('Files by status (contract §10)');
/** Thumbnails and text recognition across the instance: how far the work, and a backfill, has come. */
export const mediaProgressSchema = z
  .object({
    thumbnails: mediaStatusCounts,
    ocr: mediaStatusCounts,
    backfilling: z.boolean().describe('Files made before a setting was on are being given their thumbnails or text'),
  })
  .meta({ id: 'MediaProgress' });
export type MediaProgress = z.infer<typeof mediaProgressSchema>;
export const mediaProgressResponse = success(mediaProgressSchema);
export const inviteListResponse = success(z.object({ invites: z.array(inviteSchema).describe('Newest first') }));
export const inviteResponse = success(inviteSchema);
export const auditPageResponse = success(auditPageSchema);

/** An account as a take-down names it: who owns what an address leads to. */
const reportedOwnerSchema = z.object({ id: z.string(), email: z.string() });

/**
 * What an address of this instance leads to (GET /api/moderation/lookup): a file or a short link of
 * any account, with its owner, for an administrator to take down (docs/decisions.md, "Taking down content").
 */
export const reportedContentSchema = z
  .discriminatedUnion('kind', [
    z.object({
      kind: z.literal('file'),
      id: z.string().describe('The file ID, for DELETE /api/moderation/files/{id}'),
      label: z.string().describe("The file's name"),
      mimeType: z.string(),
      sizeBytes: z.number().int(),
      visibility: z.enum(['PUBLIC', 'PRIVATE']),
      hasPassword: z.boolean(),
      views: z.number().int(),
      createdAt: timestamp,
      owner: reportedOwnerSchema,
    }),
    z.object({
      kind: z.literal('link'),
      id: z.string().describe('The link record ID, for DELETE /api/moderation/links/{id}'),
      label: z.string().describe('Where the link redirects'),
      shortCode: z.string(),
      clicks: z.number().int(),
      createdAt: timestamp,
      owner: reportedOwnerSchema,
    }),
  ])
  .meta({ id: 'ReportedContent' });
export type ReportedContent = z.infer<typeof reportedContentSchema>;
export const reportedContentResponse = success(reportedContentSchema);
