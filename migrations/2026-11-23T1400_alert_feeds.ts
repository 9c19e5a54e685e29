// A market-search query (one rankings query, one watchlist's edges...) keeps its entities apart
// from the other queries of its source: the same event has another rank in another ranking. An
// alert of such an entity names, besides its source, the feed its snapshot is stored under.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // Null: the snapshot is stored under the alert's own source.
  await db.schema.alterTable('alerts').addColumn('feed', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('alerts').dropColumn('feed').execute();
}
