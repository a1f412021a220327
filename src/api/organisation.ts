import { z } from 'zod';
import { success, timestamp } from './envelope.ts';
import { profileOptionsSchema } from './upload-options.ts';

/** An upload profile: a saved set of upload options (contract §3). */
export const uploadProfileSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    options: profileOptionsSchema,
    createdAt: timestamp,
    updatedAt: timestamp,
    isDefault: z.boolean().describe("The account's default profile: used when an upload selects none"),
  })
  .meta({ id: 'UploadProfile' });
export type UploadProfile = z.infer<typeof uploadProfileSchema>;

export const uploadProfileListResponse = success(z.object({ profiles: z.array(uploadProfileSchema) }));
export const uploadProfileResponse = success(z.object({ profile: uploadProfileSchema }));

/** A folder; the tree is given by `parentId` (contract §3). */
export const folderSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    parentId: z.string().nullable().describe('null: at the top level'),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'Folder' });
export type Folder = z.infer<typeof folderSchema>;

/** A folder's public address (docs/decisions.md, "Sharing a folder"). */
export const folderShareSchema = z
  .object({
    url: z.string().describe('The public page of the folder: its public files, newest first'),
    createdAt: timestamp,
    expiresAt: timestamp.nullable().describe('When the address stops working; null: while the folder is shared'),
    subfolders: z.boolean().describe("Whether the page lists the public files of the folder's subfolders too"),
  })
  .meta({ id: 'FolderShare' });
export type FolderShare = z.infer<typeof folderShareSchema>;
const sharedFolderSchema = folderShareSchema.extend({ folderId: z.string() });
export type SharedFolder = z.infer<typeof sharedFolderSchema>;
export const folderShareListResponse = success(z.object({ shares: z.array(sharedFolderSchema).describe('Every shared folder of the account, oldest share first') }));
export const folderShareResponse = success(z.object({ share: folderShareSchema.nullable().describe('null: the folder is not shared') }));

export const folderListResponse = success(z.object({ folders: z.array(folderSchema).describe('Every folder, flat, sorted by name') }));
export const folderResponse = success(z.object({ folder: folderSchema }));

/** The signed-in account's own settings (`GET /api/account`). */
export const accountSchema = z
  .object({
    id: z.string(),
    email: z.string(),
    name: z.string(),
    urlId: z.string(),
    defaultProfileId: z.string().nullable(),
    uploadDefaults: profileOptionsSchema.describe("The account's upload defaults, under any profile"),
    usedBytes: z.number().int().describe('Bytes charged against the quota'),
    quotaBytes: z.number().int().nullable().describe('The quota that applies, in bytes; null: unlimited'),
  })
  .meta({ id: 'Account' });
export type Account = z.infer<typeof accountSchema>;

export const accountResponse = success(z.object({ account: accountSchema }));
