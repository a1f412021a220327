import { setTimeout as sleep } from 'node:timers/promises';
import { Migrator, PostgresAdapter, sql, type Migration } from 'kysely';
import { isSqliteBusy, type Db } from './database.ts';
import * as accounts from './migrations/0001-accounts.ts';
import * as tokens from './migrations/0002-tokens.ts';
import * as files from './migrations/0003-files.ts';
import * as links from './migrations/0004-links.ts';
import * as chunks from './migrations/0007-chunks.ts';
import * as jobsWebhooks from './migrations/0005-jobs-webhooks.ts';
import * as listing from './migrations/0006-listing.ts';
import * as listingVersion from './migrations/0008-listing-version.ts';
import * as auditReading from './migrations/0009-audit-reading.ts';
import * as uploadReservations from './migrations/0010-upload-reservations.ts';
import * as uploadCredentialEncrypted from './migrations/0011-upload-credential-encrypted.ts';
import * as sessionHistory from './migrations/0012-session-history.ts';
import * as twoFactor from './migrations/0013-two-factor.ts';
import * as passkeys from './migrations/0014-passkeys.ts';
import * as media from './migrations/0015-media.ts';
import * as searchIndex from './migrations/0016-search-index.ts';
import * as imports from './migrations/0017-imports.ts';
import * as fileCounts from './migrations/0018-file-counts.ts';
import * as uploadCounts from './migrations/0019-upload-counts.ts';
import * as searchDocuments from './migrations/0020-search-documents.ts';
import * as searchSortKeys from './migrations/0021-search-sort-keys.ts';
import * as visibilityIndexes from './migrations/0022-visibility-indexes.ts';
import * as taggedCount from './migrations/0023-tagged-count.ts';
import * as sortIndexFilters from './migrations/0024-sort-index-filters.ts';
import * as searchNames from './migrations/0025-search-names.ts';
import * as folderTimeline from './migrations/0026-folder-timeline.ts';
import * as searchFilterKeys from './migrations/0027-search-filter-keys.ts';
import * as filterCombinations from './migrations/0028-filter-combinations.ts';
import * as timelineFilterIndexes from './migrations/0029-timeline-filter-indexes.ts';
import * as tagUploadTimes from './migrations/0030-tag-upload-times.ts';
import * as taggedFiles from './migrations/0031-tagged-files.ts';
import * as untaggedCombinations from './migrations/0032-untagged-combinations.ts';
import * as untaggedTimelineIndexes from './migrations/0033-untagged-timeline-indexes.ts';
import * as searchFacets from './migrations/0034-search-facets.ts';
import * as earlierVersions from './migrations/0035-earlier-versions.ts';
import * as searchRefold from './migrations/0036-search-refold.ts';
import * as searchSpaces from './migrations/0037-search-spaces.ts';
import * as ticketPassword from './migrations/0038-ticket-password.ts';
import * as searchAccents from './migrations/0039-search-accents.ts';
import * as webhookSecretRotation from './migrations/0040-webhook-secret-rotation.ts';
import * as sessionConfirmed from './migrations/0041-session-confirmed.ts';
import * as accountSuspension from './migrations/0042-account-suspension.ts';
import * as inviteNotes from './migrations/0043-invite-notes.ts';
import * as adminActions from './migrations/0044-admin-actions.ts';
import * as accountNotices from './migrations/0045-account-notices.ts';
import * as folderShares from './migrations/0046-folder-shares.ts';
import * as folderShareExpiry from './migrations/0047-folder-share-expiry.ts';
import * as folderShareSubfolders from './migrations/0048-folder-share-subfolders.ts';
import * as totpUsedSteps from './migrations/0049-totp-used-steps.ts';
import * as completionClaims from './migrations/0050-completion-claims.ts';
import * as ocrScanIndex from './migrations/0051-ocr-scan-index.ts';
import * as tagCombinations from './migrations/0052-tag-combinations.ts';
import * as batchedFileChanges from './migrations/0053-batched-file-changes.ts';
import * as linearTagChanges from './migrations/0054-linear-tag-changes.ts';
import * as tagFolderIndex from './migrations/0055-tag-folder-index.ts';

// Listed explicitly rather than read from the directory: the order is part of the schema's history.
export const migrations: Readonly<Record<string, Migration>> = {
  '0001-accounts': accounts,
  '0002-tokens': tokens,
  '0003-files': files,
  '0004-links': links,
  '0005-jobs-webhooks': jobsWebhooks,
  '0006-listing': listing,
  '0007-chunks': chunks,
  '0008-listing-version': listingVersion,
  '0009-audit-reading': auditReading,
  '0010-upload-reservations': uploadReservations,
  '0011-upload-credential-encrypted': uploadCredentialEncrypted,
  '0012-session-history': sessionHistory,
  '0013-two-factor': twoFactor,
  '0014-passkeys': passkeys,
  '0015-media': media,
  '0016-search-index': searchIndex,
  '0017-imports': imports,
  '0018-file-counts': fileCounts,
  '0019-upload-counts': uploadCounts,
  '0020-search-documents': searchDocuments,
  '0021-search-sort-keys': searchSortKeys,
  '0022-visibility-indexes': visibilityIndexes,
  '0023-tagged-count': taggedCount,
  '0024-sort-index-filters': sortIndexFilters,
  '0025-search-names': searchNames,
  '0026-folder-timeline': folderTimeline,
  '0027-search-filter-keys': searchFilterKeys,
  '0028-filter-combinations': filterCombinations,
  '0029-timeline-filter-indexes': timelineFilterIndexes,
  '0030-tag-upload-times': tagUploadTimes,
  '0031-tagged-files': taggedFiles,
  '0032-untagged-combinations': untaggedCombinations,
  '0033-untagged-timeline-indexes': untaggedTimelineIndexes,
  '0034-search-facets': searchFacets,
  '0035-earlier-versions': earlierVersions,
  '0036-search-refold': searchRefold,
  '0037-search-spaces': searchSpaces,
  '0038-ticket-password': ticketPassword,
  '0039-search-accents': searchAccents,
  '0040-webhook-secret-rotation': webhookSecretRotation,
  '0041-session-confirmed': sessionConfirmed,
  '0042-account-suspension': accountSuspension,
  '0043-invite-notes': inviteNotes,
  '0044-admin-actions': adminActions,
  '0045-account-notices': accountNotices,
  '0046-folder-shares': folderShares,
  '0047-folder-share-expiry': folderShareExpiry,
  '0048-folder-share-subfolders': folderShareSubfolders,
  '0049-totp-used-steps': totpUsedSteps,
  '0050-completion-claims': completionClaims,
  '0051-ocr-scan-index': ocrScanIndex,
  '0052-tag-combinations': tagCombinations,
  '0053-batched-file-changes': batchedFileChanges,
  '0054-linear-tag-changes': linearTagChanges,
  '0055-tag-folder-index': tagFolderIndex,
};

/** Applies every migration not yet applied; with `upTo`, only those up to that one (for tests of a migration). */
export async function migrate(db: Db, upTo?: string, onWaiting?: () => void): Promise<string[]> {
  return applyMigrations(db, migrations, upTo, onWaiting);
}

/**
 * How long a start waits for another process's upgrade of the same SQLite database (a second
 * worker, `migrate` run by hand, the import command): an upgrade of a large library takes its
 * time, and a start that waited only the usual 5 s for SQLite's write lock failed with "database is
 * locked" while the other process was still at it. PostgreSQL's migrator waits on its lock by itself.
 */
const MIGRATION_LOCK_WAIT_MS = 15 * 60_000;
const MIGRATION_LOCK_PAUSE_MS = 250;

/**
 * Applies the migrations of `list` not yet applied, all in one transaction with their records, on
 * both databases (SQLite's too: see TransactionalDdlSqliteAdapter), so a process stopped part-way
 * leaves the database as it was and the next start applies them again.
 */
export async function applyMigrations(db: Db, list: Readonly<Record<string, Migration>>, upTo?: string, onWaiting?: () => void): Promise<string[]> {
  const began = performance.now();
  for (let waited = false; ; waited = true) {
    try {
      return await applyPending(db, list, upTo);
    } catch (error) {
      // Nothing of this attempt remains (one transaction); once the other process commits, what it
      // applied is no longer pending, and this start applies whatever is left.
      if (!isSqliteBusy(error) || performance.now() - began >= MIGRATION_LOCK_WAIT_MS) throw error;
      // Said once, so an operator knows why a start stands still.
      if (!waited) onWaiting?.();
      await sleep(MIGRATION_LOCK_PAUSE_MS);
    }
  }
}

async function applyPending(db: Db, list: Readonly<Record<string, Migration>>, upTo?: string): Promise<string[]> {
  // Nothing to apply, as at almost every start: told by the migration table alone, without the
  // transaction, whose IMMEDIATE begin waits for SQLite's write lock. A worker started while another
  // program held that lock failed to start, and at the first start that stops every worker.
  const applied = await appliedMigrations(db);
  if (upTo === undefined && applied !== null && applied.size === Object.keys(list).length && Object.keys(list).every((name) => applied.has(name))) return [];
  // Migrations are independent of each other, so one that arrives later with a lower number may still run.
  const migrator = new Migrator({ db, provider: { getMigrations: async () => ({ ...list }) }, allowUnorderedMigrations: true });
  // On SQLite, with foreign keys off, as SQLite asks of schema changes that make a table anew
  // (sqlite.org, "Making Other Kinds Of Table Schema Changes"; migration 0035-earlier-versions);
  // the pragma has no effect inside a transaction, so it is set around it. No migration relies on a
  // foreign key's action while it runs, and one that makes a table anew checks the keys itself.
  const sqlite = !(db.getExecutor().adapter instanceof PostgresAdapter);
  if (sqlite) await sql`pragma foreign_keys = off`.execute(db);
  const { error, results } = await (upTo === undefined ? migrator.migrateToLatest() : migrator.migrateTo(upTo)).finally(async () => {
    if (sqlite) await sql`pragma foreign_keys = on`.execute(db);
  });
  if (error) throw explained(error);
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** The names of the migrations the database records as applied; null before the first start. */
async function appliedMigrations(db: Db): Promise<Set<string> | null> {
  try {
    const rows = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
    return new Set(rows.rows.map((row) => row.name));
  } catch {
    return null;
  }
}

/**
 * Kysely's "corrupted migrations: previously executed migration X is missing" is what an older
 * version of Hoard meets on a database a newer one has upgraded; said so, with what to do.
 */
function explained(error: unknown): Error {
  const message = error instanceof Error ? error.message : String(error);
  const unknown = /^corrupted migrations: previously executed migration (.+) is missing$/.exec(message);
  if (!unknown) return error instanceof Error ? error : new Error(message);
  return new Error(
    `The database was upgraded by a newer version of Hoard (it has migration ${unknown[1]}, which this version does not know): run that version, or restore a backup made before the upgrade`,
  );
}
