// The initial schema. Frozen: later changes go in new migrations. Imports nothing from the app.
// The same on SQLite and PostgreSQL, but for row numbers, which each writes its own way.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // Of the two adapters, PostgreSQL's runs DDL in transactions. Not `instanceof PostgresAdapter`: a
  // compiled migration may hold another copy of kysely than the store that runs it (the bench's steps).
  const postgres = db.getExecutor().adapter.supportsTransactionalDdl;
  // The latest snapshot of every entity of every source, one row each.
  await db.schema
    .createTable('entities')
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('entity_key', 'text', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('first_seen_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('entities_pk', ['source', 'entity_key'])
    .execute();

  // Snapshot history, pruned by retention.
  await db.schema
    .createTable('snapshots')
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('entity_key', 'text', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('stored_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('snapshots_pk', ['source', 'entity_key', 'seq'])
    .execute();
  await db.schema.createIndex('snapshots_stored_at').on('snapshots').column('stored_at').execute();

  await db.schema
    .createTable('source_state')
    .addColumn('source', 'text', (c) => c.primaryKey())
    .addColumn('baseline_at', 'text')
    .addColumn('watermark', 'text')
    .addColumn('last_success_at', 'text')
    .addColumn('last_error_at', 'text')
    .addColumn('last_error', 'text')
    .execute();

  await db.schema
    .createTable('rule_state')
    .addColumn('rule', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('entity_key', 'text', (c) => c.notNull())
    .addColumn('armed', 'integer', (c) => c.notNull())
    .addColumn('last_fired_at', 'text')
    .addPrimaryKeyConstraint('rule_state_pk', ['rule', 'source', 'entity_key'])
    .execute();

  await db.schema
    .createTable('alerts')
    // Derived from what caused the alert (rule, entity, snapshot transition): as the primary key,
    // the exactly-once guard.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('rule', 'text', (c) => c.notNull())
    .addColumn('severity', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('entity', 'text', (c) => c.notNull())
    .addColumn('trigger', 'text', (c) => c.notNull())
    .addColumn('fired_at', 'text', (c) => c.notNull())
    .addColumn('summary', 'text', (c) => c.notNull())
    .addColumn('changes', 'text', (c) => c.notNull())
    // The entity's snapshot that fired it (in entities while latest, then in snapshots): one copy
    // however many rules fire on the same change.
    .addColumn('seq', 'integer', (c) => c.notNull())
    // SQLite numbers rows in the order they are stored (rowid), which listings use to order alerts
    // of one second; PostgreSQL has no such number, so it gets a column of that name.
    .$call((table) => (postgres ? table.addColumn('rowid', 'serial', (c) => c.notNull()) : table))
    .execute();
  await db.schema.createIndex('alerts_fired_at').on('alerts').columns(['fired_at', 'id']).execute();
  await db.schema.createIndex('alerts_snapshot').on('alerts').columns(['source', 'entity', 'seq']).execute();

  // The outbox: one delivery per (alert, channel), written with the alert.
  await db.schema
    .createTable('deliveries')
    .addColumn('id', postgres ? 'serial' : 'integer', (c) => (postgres ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('alert_id', 'text', (c) => c.notNull().references('alerts.id'))
    .addColumn('channel', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('digest_id', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text')
    .addColumn('last_attempt_at', 'text')
    .addColumn('last_error', 'text')
    .addColumn('delivered_at', 'text')
    .addColumn('duration_ms', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('deliveries_alert_channel', ['alert_id', 'channel'])
    .execute();
  await db.schema.createIndex('deliveries_due').on('deliveries').columns(['status', 'next_attempt_at']).execute();

  // Generation runs started by `generate`.
  await db.schema
    .createTable('runs')
    .addColumn('run_id', 'text', (c) => c.primaryKey())
    .addColumn('venue', 'text', (c) => c.notNull())
    .addColumn('event_key', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  // Per event: its venue and report key (learned once from the detail) and when its report was checked.
  await db.schema
    .createTable('report_checks')
    .addColumn('event_ticker', 'text', (c) => c.primaryKey())
    .addColumn('venue', 'text', (c) => c.notNull())
    .addColumn('event_key', 'text', (c) => c.notNull())
    .addColumn('last_checked_at', 'text')
    .addColumn('found', 'integer')
    .execute();
  await db.schema.createIndex('report_checks_due').on('report_checks').column('last_checked_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['report_checks', 'runs', 'deliveries', 'alerts', 'rule_state', 'source_state', 'snapshots', 'entities']) {
    await db.schema.dropTable(table).execute();
  }
}
