// A send's lease: until when the process that claimed it (claimed_by) holds it. Processes on other
// machines share a PostgreSQL database, where a pid says nothing: a claim whose lease has run out
// (its process died mid-send) is sent again, with the same id, never earlier.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('deliveries').addColumn('claimed_until', 'text').execute();
  await db.schema.alterTable('digests').addColumn('claimed_until', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('deliveries').dropColumn('claimed_until').execute();
  await db.schema.alterTable('digests').dropColumn('claimed_until').execute();
}
