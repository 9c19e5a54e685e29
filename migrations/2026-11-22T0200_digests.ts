// Digest batches: one row per (rule, channel) batch once it is closed, delivered like an alert.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('digests')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('rule', 'text', (c) => c.notNull())
    .addColumn('channel', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('opened_at', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text')
    .addColumn('last_attempt_at', 'text')
    .addColumn('last_error', 'text')
    .addColumn('delivered_at', 'text')
    .addColumn('duration_ms', 'integer')
    .execute();
  await db.schema.createIndex('digests_due').on('digests').columns(['status', 'next_attempt_at']).execute();
  await db.schema.createIndex('deliveries_digest').on('deliveries').columns(['digest_id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('deliveries_digest').execute();
  await db.schema.dropTable('digests').execute();
}
