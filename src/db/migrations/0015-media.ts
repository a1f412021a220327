import type { Kysely } from 'kysely';

/**
 * Thumbnails and recognised text (contract §10), made by background jobs after a file is committed.
 *
 * - `thumbnailStatus` / `ocrStatus`: `pending` (a job will make it), `done`, `failed` (the bytes could
 *   not be read as their type, or were refused as a decompression bomb), `unsupported` (the type has
 *   none, or this machine lacks the tool) or `disabled` (the instance setting was off when the file
 *   came, or the file is older than the feature). Files that exist when this runs are `disabled`:
 *   the backfill that follows a setting being on gives them theirs, paced, as it does after
 *   turning a setting back on.
 * - `thumbnailKey`: where the WebP thumbnail is stored (derived from the file's storage key, with a
 *   version so that a remade thumbnail never answers to an old ETag); null while there is none.
 * - `mediaWidth` / `mediaHeight`: the image's or video frame's displayed size, for share-page embeds.
 * - an index of jobs by type, for the job runner's claims by type.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('files')
    .addColumn('thumbnailStatus', 'text', (c) => c.notNull().defaultTo('disabled'))
    .execute();
  await db.schema.alterTable('files').addColumn('thumbnailKey', 'text').execute();
  await db.schema.alterTable('files').addColumn('thumbnailWidth', 'integer').execute();
  await db.schema.alterTable('files').addColumn('thumbnailHeight', 'integer').execute();
  await db.schema.alterTable('files').addColumn('mediaWidth', 'integer').execute();
  await db.schema.alterTable('files').addColumn('mediaHeight', 'integer').execute();
  await db.schema
    .alterTable('files')
    .addColumn('ocrStatus', 'text', (c) => c.notNull().defaultTo('disabled'))
    .execute();
  // The backfill walks the files of one status in ID order; the settings page counts them.
  await db.schema.createIndex('files_thumbnailStatus_id').on('files').columns(['thumbnailStatus', 'id']).execute();
  await db.schema.createIndex('files_ocrStatus_id').on('files').columns(['ocrStatus', 'id']).execute();
  // The storage clean-up job asks whether any record still names a key as its thumbnail.
  await db.schema.createIndex('files_thumbnailKey').on('files').column('thumbnailKey').execute();
  // Job runners claim by type (media jobs have slots of their own, src/jobs/queue.ts): a backlog of
  // one type must not be walked through by every claim of another.
  await db.schema.createIndex('jobs_type_runAt').on('jobs').columns(['type', 'runAt', 'id']).execute();
}
