import type { Generated } from 'kysely';

/**
 * Row types of every table. Times are Unix epoch milliseconds (bigint) on both databases, so
 * range queries, ordering and calendar bucketing behave identically on SQLite and PostgreSQL.
 * Flags are 0/1 integers for the same reason.
 */
export interface UsersTable {
  id: string;
  email: string;
  name: string;
  passwordHash: string;
  urlId: string;
  emailVerified: number;
  quotaBytes: number | null;
  /** Plaintext legacy upload credential of older versions; emptied at start-up (migration 0011). */
  uploadToken: string | null;
  uploadTokenHash: string | null;
  /** The legacy upload credential, sealed by the secret box (src/auth/secret-box.ts). */
  uploadTokenEncrypted: string | null;
  usedBytes: Generated<number>;
  /** Number of the account's files, kept by database triggers on every insert and delete. */
  fileCount: Generated<number>;
  /** Changes with everything the account's file listing shows (migration 0008-listing-version). */
  listingVersion: Generated<number>;
  defaultProfileId: string | null;
  uploadDefaults: string | null;
  createdAt: number;
  updatedAt: number;
  /** The confirmed TOTP secret, sealed (src/auth/secret-box.ts); null: two-factor is off. */
  totpSecretSealed: string | null;
  /** A TOTP secret waiting for its first code (POST /api/auth/totp/setup), sealed. */
  totpPendingSealed: string | null;
  /**
   * Search documents (migration 0020-search-documents, SQLite only; empty on PostgreSQL): the
   * account's own number, the last document number given to one of its files, the latest upload
   * time among them, and whether a file ever arrived with an earlier upload time than one before it.
   */
  accountNo: number | null;
  docSeq: Generated<number>;
  lastUploadAt: number | null;
  docsUnordered: Generated<number>;
  /** When an administrator suspended the account; null: not suspended (migration 0042). */
  suspendedAt: number | null;
}

export interface RolesTable {
  id: string;
  name: string;
  systemKey: string | null;
  /** JSON array of permission names. */
  permissions: string;
  createdAt: number;
  updatedAt: number;
}

export interface UserRolesTable {
  userId: string;
  roleId: string;
}

export interface SessionsTable {
  /** SHA-256 (hex) of the cookie secret: a leaked database row cannot be replayed as a cookie. */
  id: string;
  userId: string;
  createdAt: number;
  lastSeenAt: number;
  expiresAt: number;
  ip: string | null;
  userAgent: string | null;
  /** The session's public ID (contract §8, session history): never the cookie secret or its hash. */
  publicId: string;
  /** How the session was opened: `password`, `two-factor` or `passkey`. */
  method: SignInMethod;
  /** When the session last confirmed the account's password after its sign-in (src/auth/sessions.ts, RECENT_SIGN_IN_MS). */
  confirmedAt: number | null;
}

export type SignInMethod = 'password' | 'two-factor' | 'passkey';

/** A passkey (WebAuthn credential) registered on an account (contract §8, "Passkeys"). */
export interface PasskeysTable {
  /** The passkey's ID in the API. */
  id: string;
  userId: string;
  /** The authenticator's credential ID, base64url; unique across the instance. */
  credentialId: string;
  /** The COSE public key, base64url. */
  publicKey: string;
  /** The last signature counter seen; 0 for authenticators that keep none. */
  counter: number;
  /** JSON array of transport hints. */
  transports: string;
  name: string;
  createdAt: number;
  lastUsedAt: number | null;
}

/** A WebAuthn challenge handed out and not yet used: 5 minutes, once (contract §8). */
export interface WebauthnChallengesTable {
  challenge: string;
  purpose: 'registration' | 'authentication';
  /** Registration: the account; sign-in: the email's account, or null (discoverable). */
  userId: string | null;
  expiresAt: number;
}

export interface SettingsTable {
  key: string;
  /** JSON value. */
  value: string;
}

export interface InvitesTable {
  id: string;
  code: string;
  createdBy: string | null;
  createdAt: number;
  expiresAt: number;
  usedAt: number | null;
  usedBy: string | null;
  note: string | null;
}

export interface RateLimitsTable {
  key: string;
  windowStart: number;
  count: number;
}

export interface UploadProfilesTable {
  id: string;
  userId: string;
  name: string;
  /** JSON object of upload options. */
  options: string;
  createdAt: number;
  updatedAt: number;
}

export interface ApiTokensTable {
  id: string;
  userId: string;
  name: string;
  /** JSON array of scopes. */
  scopes: string;
  profileId: string | null;
  /** SHA-256 (hex) of the secret; the secret itself is never stored. */
  secretHash: string;
  expiresAt: number | null;
  revokedAt: number | null;
  lastUsedAt: number | null;
  createdAt: number;
}

export interface AuditEventsTable {
  id: string;
  userId: string;
  tokenId: string | null;
  credential: 'token' | 'legacy';
  operation: string;
  route: string;
  status: number;
  ip: string | null;
  createdAt: number;
}

/** One change an administrator made (migration 0044; src/audit/admin-actions.ts). */
export interface AdminActionsTable {
  id: string;
  /** The account that made the change, and its email then; no reference, so the record outlives it. */
  actorId: string;
  actorEmail: string;
  action: string;
  /** What was changed (an account's, role's, invite's, file's or link's ID); null for the instance's settings. */
  targetId: string | null;
  /** The target as it was named then: an email, a role's name, an invite's note or code, a file's name. */
  targetLabel: string;
  /** What changed, as JSON: `[{field, from?, to?}]`; never a secret (a new password is only "password"). */
  changes: string | null;
  createdAt: number;
}

/** Something an account is told until it dismisses it (migration 0045; src/accounts/notices.ts). */
export interface AccountNoticesTable {
  id: string;
  userId: string;
  kind: 'file.take-down' | 'link.take-down';
  /** What it is about, as it was named then: a file's name, a short link's address. */
  subject: string;
  /** What the administrator gave as the reason; null: none given. */
  reason: string | null;
  createdAt: number;
}

/** A folder's public address (migration 0046; src/organisation/folder-shares.ts). */
export interface FolderSharesTable {
  folderId: string;
  userId: string;
  /** The address's random part: `/folder/{shareId}`. */
  shareId: string;
  createdAt: number;
  /** When the address stops working; null: while the folder is shared (migration 0047-folder-share-expiry). */
  expiresAt: number | null;
  /** 1: the page lists the subfolders' public files too (migration 0048-folder-share-subfolders). */
  subfolders: Generated<number>;
}

export interface ShortLinksTable {
  id: string;
  userId: string;
  /** Six characters of [A-Za-z0-9_], unique by constraint. */
  shortCode: string;
  targetUrl: string;
  clicks: Generated<number>;
  createdAt: number;
}

export interface JobsTable {
  id: string;
  type: string;
  /** JSON value handed to the job's handler. */
  payload: string;
  runAt: number;
  /** Claims so far; the running attempt's number while leased. */
  attempts: Generated<number>;
  leasedUntil: number | null;
  /** Lease token of the runner holding the job (unique per claim). */
  leasedBy: string | null;
  lastError: string | null;
  createdAt: number;
  /** Unique when set: enqueueing the same key again replaces the waiting job. */
  dedupeKey: string | null;
}

export interface WebhooksTable {
  id: string;
  userId: string;
  name: string;
  url: string;
  /** AES-256-GCM ciphertext of the `whsec_` signing secret. */
  secretEncrypted: string;
  /** The secret the current one replaced, still signing beside it until `previousSecretUntil` (ms). */
  previousSecretEncrypted: string | null;
  previousSecretUntil: number | null;
  enabled: number;
  createdAt: number;
  updatedAt: number;
}

export interface WebhookDeliveriesTable {
  id: string;
  webhookId: string;
  userId: string;
  eventId: string;
  eventType: string;
  test: number;
  /** The exact JSON body sent on every attempt. */
  body: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: number;
  deliveredAt: number | null;
}

export interface FoldersTable {
  id: string;
  userId: string;
  name: string;
  parentId: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface TagsTable {
  id: string;
  userId: string;
  name: string;
  createdAt: number;
}

export type Visibility = 'PUBLIC' | 'PRIVATE';
export type ExpiryAction = 'DELETE' | 'SET_PRIVATE';

export interface FilesTable {
  id: string;
  userId: string;
  name: string;
  originalName: string;
  storageKey: string;
  mimeType: string;
  size: number;
  sha256: string | null;
  visibility: Visibility;
  passwordHash: string | null;
  expiresAt: number | null;
  expiryAction: ExpiryAction | null;
  folderId: string | null;
  shareStyle: string;
  views: Generated<number>;
  downloads: Generated<number>;
  ocrText: string | null;
  /**
   * `foldForSearch()` of name and ocrText (src/shared/search-text.ts): written with every name or OCR
   * text; a database trigger only backstops inserts that leave it out (with an ASCII-only lower()).
   */
  searchName: string | null;
  searchOcr: string | null;
  /** Contract §10; see migration 0015-media. */
  thumbnailStatus: Generated<MediaStatus>;
  thumbnailKey: string | null;
  thumbnailWidth: number | null;
  thumbnailHeight: number | null;
  mediaWidth: number | null;
  mediaHeight: number | null;
  ocrStatus: Generated<MediaStatus>;
  /**
   * The file's number in the search index (migration 0020-search-documents): given by the database
   * on SQLite (the account's number × 2^32 + its running count of files); null on PostgreSQL.
   */
  docId: Generated<number | null>;
  /** 1 when the file has a tag that counts, kept by the database (migration 0031-tagged-files). */
  tagged: Generated<number>;
  createdAt: number;
  updatedAt: number;
}

export type MediaStatus = 'pending' | 'done' | 'failed' | 'unsupported' | 'disabled';

/** An account's number of files per value of a single listing filter (migration 0018-file-counts). */
export interface FileCountsTable {
  userId: string;
  /** `tagged` (value ''): files with a tag that counts (migration 0023-tagged-count). */
  dimension: 'visibility' | 'type' | 'folder' | 'tag' | 'tagged';
  value: string;
  files: number | string;
}

/**
 * An account's number of files per combination of type, visibility, password and folder ('' for
 * none) (migration 0028-filter-combinations).
 */
export interface FileCombinationsTable {
  userId: string;
  mimeType: string;
  visibility: 'PUBLIC' | 'PRIVATE';
  /** 1 when the files have a password. */
  password: number;
  folderId: string;
  /** The files' `tagged` mark (migration 0032-untagged-combinations). */
  tagged: number;
  files: number | string;
}

/** The same per tag, for the tags that count (not excluded) (migration 0052-tag-combinations). */
export interface TagCombinationsTable {
  userId: string;
  tagId: string;
  mimeType: string;
  visibility: 'PUBLIC' | 'PRIVATE';
  password: number;
  folderId: string;
  files: number | string;
}

/**
 * SQLite only: the code of each MIME type ('t'), folder ('f') and tag ('g') that a facet of the
 * trigram index names (migration 0034-search-facets).
 */
export interface SearchFacetValuesTable {
  code: number;
  kind: 't' | 'f' | 'g';
  value: string;
}

/** An account's number of files per quarter hour and per UTC day of upload (migration 0019-upload-counts). */
export interface UploadCountsTable {
  userId: string;
  /** The slot's length in minutes: 15 or 1440. */
  span: number;
  /** The upload time in milliseconds divided by the slot's length, rounded down. */
  slot: number | string;
  files: number | string;
}

/**
 * PostgreSQL only: each file's folded name, upload time and account, kept by the database
 * (migration 0025-search-names), for counting a search's name matches without reading the files.
 */
export interface FileNamesTable {
  fileId: string;
  userId: string;
  createdAt: number | string;
  searchName: string | null;
}

/** A file the import command made, by its path in the imported tree and its bytes (migration 0017-imports). */
export interface ImportedFilesTable {
  userId: string;
  /** Relative to the imported directory, with `/` between segments. */
  relativePath: string;
  sha256: string;
  fileId: string;
  importedAt: number;
}

export interface FileTagsTable {
  fileId: string;
  tagId: string;
  excluded: Generated<number>;
  /** The file's upload time, kept by the database (migration 0030-tag-upload-times). */
  createdAt: Generated<number | string | null>;
  /**
   * The file's MIME type, visibility, password (1 when it has one) and folder ('' for none), kept by
   * the database for the counts per tag and combination (migration 0052-tag-combinations).
   */
  mimeType: Generated<string | null>;
  visibility: Generated<'PUBLIC' | 'PRIVATE' | null>;
  password: Generated<number | null>;
  folderId: Generated<string | null>;
}

export type ChunkSessionState = 'open' | 'completing' | 'completed';

export interface ChunkSessionsTable {
  id: string;
  userId: string;
  fileId: string;
  fileKey: string;
  filename: string;
  mimeType: string | null;
  size: number;
  options: string;
  folderId: string | null;
  profileId: string | null;
  boundProfileId: string | null;
  storageTarget: string | null;
  storageUploadId: string;
  state: ChunkSessionState;
  completingUntil: number | null;
  /** The token of the completion request holding the lease (migration 0050-completion-claims). */
  completionClaim: string | null;
  completedFileId: string | null;
  lastActivityAt: number;
  createdAt: number;
}

export interface ChunkPartsTable {
  sessionId: string;
  partNumber: number;
  etag: string;
  size: number;
}

export interface ChunkPartReservationsTable {
  id: string;
  sessionId: string;
  partNumber: number;
  bytes: number;
  liveUntil: number;
}

export interface Database {
  users: UsersTable;
  roles: RolesTable;
  userRoles: UserRolesTable;
  sessions: SessionsTable;
  settings: SettingsTable;
  invites: InvitesTable;
  rateLimits: RateLimitsTable;
  uploadProfiles: UploadProfilesTable;
  apiTokens: ApiTokensTable;
  auditEvents: AuditEventsTable;
  adminActions: AdminActionsTable;
  accountNotices: AccountNoticesTable;
  folders: FoldersTable;
  folderShares: FolderSharesTable;
  tags: TagsTable;
  files: FilesTable;
  fileTags: FileTagsTable;
  fileCounts: FileCountsTable;
  fileCombinations: FileCombinationsTable;
  tagCombinations: TagCombinationsTable;
  searchFacetValues: SearchFacetValuesTable;
  uploadCounts: UploadCountsTable;
  fileNames: FileNamesTable;
  importedFiles: ImportedFilesTable;
  chunkSessions: ChunkSessionsTable;
  chunkParts: ChunkPartsTable;
  chunkPartReservations: ChunkPartReservationsTable;
  jobs: JobsTable;
  webhooks: WebhooksTable;
  webhookDeliveries: WebhookDeliveriesTable;
  shortLinks: ShortLinksTable;
  passkeys: PasskeysTable;
  webauthnChallenges: WebauthnChallengesTable;
  recoveryCodes: RecoveryCodesTable;
  totpUsedSteps: TotpUsedStepsTable;
  signInTickets: SignInTicketsTable;
}

/** A 30-second step whose two-factor code the account used: each works once (migration 0049-totp-used-steps). */
export interface TotpUsedStepsTable {
  userId: string;
  step: number;
}

export interface RecoveryCodesTable {
  id: string;
  userId: string;
  codeHash: string;
  usedAt: number | null;
}

/** The code step of a sign-in with two-factor on (contract §8): 5 minutes, once, 5 wrong codes. */
export interface SignInTicketsTable {
  id: string;
  userId: string;
  expiresAt: number;
  failures: Generated<number>;
  usedAt: number | null;
  /** `passwordFingerprint()` of the password hash the ticket was earned with (migration 0038). */
  passwordFingerprint: string | null;
}

export type { Generated };
