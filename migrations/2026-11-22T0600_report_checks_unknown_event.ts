// An event whose detail answers 404 (delisted) has no venue or report key, yet its check time is
// kept so that it waits its turn behind the others: venue and event_key become nullable. SQLite
// cannot relax NOT NULL in place, so the table is rebuilt.
import { sql, type Kysely } from 'kysely';

async function rebuild(db: Kysely<any>, keysRequired: boolean): Promise<void> {
  await db.schema
    .createTable('report_checks_next')
    .addColumn('event_ticker', 'text', (c) => c.primaryKey())
    .addColumn('venue', 'text', (c) => (keysRequired ? c.notNull() : c))
    .addColumn('event_key', 'text', (c) => (keysRequired ? c.notNull() : c))
    .addColumn('last_checked_at', 'text')
    .addColumn('found', 'integer')
    .execute();
  await sql`INSERT INTO report_checks_next (event_ticker, venue, event_key, last_checked_at, found)
    SELECT event_ticker, venue, event_key, last_checked_at, found FROM report_checks
    WHERE ${keysRequired ? sql`venue IS NOT NULL AND event_key IS NOT NULL` : sql`1 = 1`}`.execute(db);
  await db.schema.dropTable('report_checks').execute();
  await db.schema.alterTable('report_checks_next').renameTo('report_checks').execute();
  await db.schema.createIndex('report_checks_due').on('report_checks').column('last_checked_at').execute();
}

export async function up(db: Kysely<any>): Promise<void> {
  await rebuild(db, false);
}

export async function down(db: Kysely<any>): Promise<void> {
  await rebuild(db, true);
}
