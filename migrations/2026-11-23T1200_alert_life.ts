// An alert's whole life: timers (dwell, overdue) indexed by due time, open alerts and their
// resolutions, notices (resolved, source health) in an outbox of their own, where a Slack message
// was posted, silences, explanations and inhibition, and each source's failures in a row.
// Frozen; imports nothing from the app; kysely's schema builder only, so that it runs on SQLite
// and PostgreSQL alike.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // At most one per rule and entity; a poll reads those of its source whose time has come.
  await db.schema
    .createTable('timers')
    .addColumn('rule', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('entity_key', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('due_at', 'text', (c) => c.notNull())
    .addColumn('cause', 'text', (c) => c.notNull())
    .addColumn('from_value', 'text')
    .addPrimaryKeyConstraint('timers_pk', ['rule', 'source', 'entity_key'])
    .execute();
  await db.schema.createIndex('timers_due').on('timers').columns(['source', 'due_at']).execute();
  await db.schema.createIndex('timers_entity').on('timers').columns(['source', 'entity_key']).execute();

  await db.schema.alterTable('alerts').addColumn('resolved_at', 'text').execute();
  await db.schema.alterTable('alerts').addColumn('inhibited_by', 'text').execute();
  await db.schema.alterTable('alerts').addColumn('explanation', 'text').execute();
  await db.schema.alterTable('alerts').addColumn('explained_at', 'text').execute();
  await db.schema.createIndex('alerts_entity').on('alerts').columns(['source', 'entity', 'rule']).execute();

  await db.schema
    .createTable('resolutions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('alert_id', 'text', (c) => c.notNull().unique())
    .addColumn('resolved_at', 'text', (c) => c.notNull())
    .addColumn('summary', 'text', (c) => c.notNull())
    .addColumn('changes', 'text', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('notices')
    // `<notice id>/<channel>`: the notice id is the body's id on every channel.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('notice_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('alert_id', 'text')
    .addColumn('channel', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text')
    .addColumn('last_attempt_at', 'text')
    .addColumn('last_error', 'text')
    .addColumn('delivered_at', 'text')
    .addColumn('duration_ms', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('claimed_by', 'integer')
    .execute();
  await db.schema.createIndex('notices_due').on('notices').columns(['status', 'next_attempt_at']).execute();

  await db.schema.alterTable('deliveries').addColumn('message_ref', 'text').execute();

  await db.schema
    .createTable('silences')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('matchers', 'text', (c) => c.notNull())
    .addColumn('starts_at', 'text', (c) => c.notNull())
    .addColumn('ends_at', 'text', (c) => c.notNull())
    .addColumn('comment', 'text')
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('silences_ends_at').on('silences').column('ends_at').execute();

  await db.schema.alterTable('source_state').addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('source_state').addColumn('health', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('source_state').dropColumn('health').execute();
  await db.schema.alterTable('source_state').dropColumn('failures').execute();
  await db.schema.dropTable('silences').execute();
  await db.schema.alterTable('deliveries').dropColumn('message_ref').execute();
  await db.schema.dropTable('notices').execute();
  await db.schema.dropTable('resolutions').execute();
  await db.schema.dropIndex('alerts_entity').execute();
  for (const column of ['explained_at', 'explanation', 'inhibited_by', 'resolved_at']) await db.schema.alterTable('alerts').dropColumn(column).execute();
  await db.schema.dropTable('timers').execute();
}
