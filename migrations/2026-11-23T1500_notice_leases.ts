// Notices are claimed as deliveries and digest batches are (2026-11-22T0700_delivery_leases): with
// a lease, until when the process that claimed one holds it.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('notices').addColumn('claimed_until', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('notices').dropColumn('claimed_until').execute();
}
