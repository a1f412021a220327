import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // The durable job queue (src/jobs/queue.ts): every piece of background work is a row here, so it
  // survives restarts and is shared by every process on the same database.
  await db.schema
    .createTable('jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('runAt', 'bigint', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('leasedUntil', 'bigint')
    .addColumn('leasedBy', 'text')
    .addColumn('lastError', 'text')
    .addColumn('createdAt', 'bigint', (c) => c.notNull())
    // NULLs are distinct on both databases: only keyed jobs are deduplicated.
    .addColumn('dedupeKey', 'text', (c) => c.unique())
    .execute();
  await db.schema.createIndex('jobs_runAt').on('jobs').columns(['runAt', 'id']).execute();

  await db.schema
    .createTable('webhooks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('userId', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    // AES-256-GCM ciphertext of the signing secret (src/webhooks/secret-box.ts).
    .addColumn('secretEncrypted', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('createdAt', 'bigint', (c) => c.notNull())
    .addColumn('updatedAt', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhooks_userId').on('webhooks').column('userId').execute();

  await db.schema
    .createTable('webhookDeliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('webhookId', 'text', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('userId', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('eventId', 'text', (c) => c.notNull())
    .addColumn('eventType', 'text', (c) => c.notNull())
    .addColumn('test', 'integer', (c) => c.notNull().defaultTo(0))
    // The exact JSON body: every attempt sends (and signs) the same bytes.
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('lastStatus', 'integer')
    .addColumn('lastError', 'text')
    .addColumn('createdAt', 'bigint', (c) => c.notNull())
    .addColumn('deliveredAt', 'bigint')
    .execute();
  await db.schema.createIndex('webhookDeliveries_webhookId_createdAt').on('webhookDeliveries').columns(['webhookId', 'createdAt']).execute();
  await db.schema.createIndex('webhookDeliveries_userId').on('webhookDeliveries').column('userId').execute();
}
