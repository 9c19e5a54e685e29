// The rules' memory is read per entity on the hot path (every rule of one source at once); the
// primary key leads with the rule, so without this index each read scanned the whole table.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('rule_state_entity').on('rule_state').columns(['source', 'entity_key']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('rule_state_entity').execute();
}
