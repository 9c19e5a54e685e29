// Which process is sending a delivery or digest right now, so that two processes delivering at
// once (a `poll --once` beside the daemon) never send the same one twice.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('deliveries').addColumn('claimed_by', 'integer').execute();
  await db.schema.alterTable('digests').addColumn('claimed_by', 'integer').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('deliveries').dropColumn('claimed_by').execute();
  await db.schema.alterTable('digests').dropColumn('claimed_by').execute();
}
