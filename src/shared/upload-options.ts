import type { ExpiryAction, Visibility } from '../db/schema.ts';

// The options' vocabulary and schema are part of the API's shapes (src/api/upload-options.ts).
export { expirations, MAX_TAGS_PER_UPLOAD, shareStyles, type Expiration, type ProfileOptions, type ShareStyle } from '../api/upload-options.ts';
export { profileOptionsInput as profileOptionsSchema } from '../api/upload-options.ts';
import { expirations, profileOptionsInput as profileOptionsSchema, type ProfileOptions, type ShareStyle } from '../api/upload-options.ts';

/** Options given with one upload request; `expiresAt` null means an explicit "no expiry". */
export interface RequestOptions extends ProfileOptions {
  expiresAt?: Date | null;
  password?: string;
}

export interface ResolvedOptions {
  visibility: Visibility;
  /** Epoch ms, or null for no expiry. */
  expiresAt: number | null;
  /**
   * When an expiration preset (not an instant) set the expiry: how long after the file is made it
   * expires, counted at the commit (a chunked upload resolves its options at its start). Absent in
   * the snapshots of chunked uploads started before it existed.
   */
  expiresAfter?: number | null;
  expiryAction: ExpiryAction;
  randomizeFileUrls: boolean;
  shareStyle: ShareStyle;
  tagIds: string[];
  password: string | null;
  /**
   * The password already hashed, in place of `password`: a chunked upload keeps its option snapshot
   * in the database until it completes, and a file password is never kept there in clear
   * (docs/decisions.md, "Chunked uploads keep no password in clear").
   */
  passwordHash?: string | null;
}

const builtinDefaults: Required<ProfileOptions> = {
  visibility: 'PUBLIC',
  expiration: 'DISABLED',
  expiryAction: 'DELETE',
  randomizeFileUrls: false,
  shareStyle: 'framed',
  tagIds: [],
};

/** Profile-level options: built-in defaults, then the account's defaults, then the profile. */
export function layerProfileOptions(accountDefaults: ProfileOptions, profile: ProfileOptions | null): Required<ProfileOptions> {
  return { ...builtinDefaults, ...definedOnly(accountDefaults), ...definedOnly(profile ?? {}) };
}

/** Adds the request's own fields (contract §4 order: defaults, account, profile, request). */
export function applyRequest(base: Required<ProfileOptions>, request: RequestOptions, now: number): ResolvedOptions {
  const merged = { ...base, ...definedOnly(request) };
  const fromExpiration = expirations[merged.expiration];
  const expiresAt = request.expiresAt !== undefined ? (request.expiresAt === null ? null : request.expiresAt.getTime()) : fromExpiration === null ? null : now + fromExpiration;
  return {
    visibility: merged.visibility,
    expiresAt,
    expiresAfter: request.expiresAt === undefined ? fromExpiration : null,
    expiryAction: merged.expiryAction,
    randomizeFileUrls: merged.randomizeFileUrls,
    shareStyle: merged.shareStyle,
    tagIds: [...new Set(merged.tagIds)],
    password: request.password ? request.password : null,
  };
}

/**
 * The profile options a request tries to override with a different value. A token bound to a
 * profile may restate the profile's options but not change them (spec, Authentication 8).
 */
export function conflictingOverrides(base: Required<ProfileOptions>, request: RequestOptions): string[] {
  const conflicts: string[] = [];
  for (const key of Object.keys(builtinDefaults) as Array<keyof ProfileOptions>) {
    const asked = request[key];
    if (asked === undefined) continue;
    const same = key === 'tagIds' ? sameSet(asked as string[], base.tagIds) : asked === base[key];
    if (!same) conflicts.push(key);
  }
  return conflicts;
}

function sameSet(a: string[], b: string[]): boolean {
  const left = new Set(a);
  const right = new Set(b);
  return left.size === right.size && [...left].every((x) => right.has(x));
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

export function parseStoredOptions(json: string | null): ProfileOptions {
  if (!json) return {};
  const parsed = profileOptionsSchema.safeParse(JSON.parse(json));
  return parsed.success ? parsed.data : {};
}
