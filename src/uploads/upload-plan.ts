import type { Db } from '../db/database.ts';
import type { Principal } from '../auth/principal.ts';
import { hasPermission } from '../auth/permissions.ts';
import { accountUploadDefaults, findOwnedProfile } from '../organisation/profiles.ts';
import { findOwnedFolder } from '../organisation/folders.ts';
import { assertOwnedTags } from '../organisation/tags.ts';
import { forbidden, invalid, notFound } from '../errors.ts';
import { applyRequest, conflictingOverrides, layerProfileOptions, type ProfileOptions, type RequestOptions, type ResolvedOptions } from '../shared/upload-options.ts';

/** Profile and folder selectors: from the X-Upload-* header or the query; `none` or an ID. */
export interface Selectors {
  profile?: string | undefined;
  folder?: string | undefined;
}

/** What an upload is going to be, known before any byte of the file is read. */
export interface UploadPlan {
  profileId: string | null;
  folderId: string | null;
  /** Built-in defaults, the account's defaults and the profile, layered. */
  base: Required<ProfileOptions>;
  /** The token is bound to a profile: the request may not change its options. */
  bound: boolean;
}

/** Header and query must agree when both are given. */
export function pickSelector(name: string, header: string | string[] | undefined, query: string | undefined): string | undefined {
  // Node joins a header sent twice with ", "; no ID or `none` holds a comma.
  if (Array.isArray(header) || header?.includes(',')) throw invalid(`${name}: give the header once, with one value`);
  const fromHeader = header?.trim() || undefined;
  const fromQuery = query?.trim() || undefined;
  if (fromHeader !== undefined && fromQuery !== undefined && fromHeader !== fromQuery) {
    throw invalid(`${name}: the header and the query parameter name different values`);
  }
  return fromHeader ?? fromQuery;
}

/**
 * Profile binding (spec, Authentication 8): a bound token gets its bound profile when X-Upload-Profile
 * is omitted; another profile or `none` is 403, and so is a deleted bound profile until it is replaced.
 */
export async function planUpload(db: Db, principal: Principal, selectors: Selectors): Promise<UploadPlan> {
  const userId = principal.user.id;
  const { defaultProfileId, uploadDefaults } = await accountUploadDefaults(db, userId);
  const boundId = principal.token?.profileId ?? null;

  let profile: { id: string; options: ProfileOptions } | null = null;
  if (boundId !== null) {
    if (selectors.profile !== undefined && selectors.profile !== boundId) {
      throw forbidden('This token is bound to an upload profile and cannot upload with another profile or none');
    }
    profile = await findOwnedProfile(db, userId, boundId);
    if (!profile) throw forbidden('The upload profile this token is bound to no longer exists; bind a new token');
  } else if (selectors.profile === 'none') {
    profile = null;
  } else if (selectors.profile !== undefined) {
    profile = await findOwnedProfile(db, userId, selectors.profile);
    if (!profile) throw notFound('Upload profile not found');
  } else if (defaultProfileId) {
    profile = await findOwnedProfile(db, userId, defaultProfileId);
  }

  let folderId: string | null = null;
  if (selectors.folder !== undefined && selectors.folder !== 'none') {
    const folder = await findOwnedFolder(db, userId, selectors.folder);
    if (!folder) throw notFound('Folder not found');
    folderId = folder.id;
  }

  return { profileId: profile?.id ?? null, folderId, base: layerProfileOptions(uploadDefaults, profile?.options ?? null), bound: boundId !== null };
}

/**
 * The request's own option fields applied to the plan, and the upload rules of the specification
 * (POST /api/files rules 1–3, Authentication 8) checked against the owner's current permissions.
 */
export async function resolveOptions(db: Db, principal: Principal, plan: UploadPlan, request: RequestOptions, now = Date.now()): Promise<ResolvedOptions> {
  if (plan.bound) {
    if (request.expiresAt !== undefined) throw forbidden('A token bound to an upload profile cannot set expiresAt');
    const conflicts = conflictingOverrides(plan.base, request);
    if (conflicts.length > 0) throw forbidden(`A token bound to an upload profile cannot change ${conflicts.join(', ')}`);
  }
  if (request.tagIds?.length) await assertOwnedTags(db, principal.user.id, request.tagIds);

  const options = applyRequest(plan.base, request, now);
  const can = (permission: Parameters<typeof hasPermission>[1]) => hasPermission(principal.permissions, permission);

  if (!can('files.share')) options.visibility = 'PRIVATE';
  // The expiration action needs its permission: DELETE files.delete, SET_PRIVATE files.share (spec, POST /api/files rule 2).
  if (options.expiresAt !== null) {
    if (options.expiresAt <= now) throw invalid('expiresAt: must be in the future');
    assertExpiryAction(principal, options.expiryAction);
  }
  if (plan.folderId !== null && !can('folders.manage')) throw forbidden();
  if (options.tagIds.length > 0 && !can('tags.manage')) throw forbidden();
  return options;
}

/**
 * The expiration action needs its permission: DELETE files.delete, SET_PRIVATE files.share (spec,
 * POST /api/files rule 2). Checked again when a chunked upload completes with its snapshot's expiry,
 * since a role change takes effect on the next request.
 */
export function assertExpiryAction(principal: Principal, action: ResolvedOptions['expiryAction']): void {
  const can = (permission: Parameters<typeof hasPermission>[1]) => hasPermission(principal.permissions, permission);
  if (action === 'DELETE' && !can('files.delete')) throw forbidden();
  if (action === 'SET_PRIVATE' && !can('files.share')) throw forbidden();
}
