// An entity's stored state as the status page reads it: its latest snapshot, its history, the
// rules' memory of it, and how many entities each source holds. Snapshots come back as stored
// (JSON text), parsed by the caller.
import { queryBuilder, type Store } from './connection.ts';
import type { EntitiesTable, RuleStateTable } from './schema.ts';

/** The entity's latest snapshot row, or undefined when the source has no such entity. */
export async function getEntity(store: Store, source: string, key: string): Promise<EntitiesTable | undefined> {
  return queryBuilder(store).selectFrom('entities').selectAll().where('source', '=', source).where('entity_key', '=', key).executeTakeFirst();
}

/** One stored snapshot of an entity: its number, when it was stored, and its data as stored. */
export interface StoredVersion {
  seq: number;
  stored_at: string;
  data: string;
}

/**
 * The entity's newest `limit` stored snapshots, oldest first: its superseded history (what
 * retention kept) and its latest.
 */
export async function entityHistory(store: Store, source: string, key: string, limit: number): Promise<StoredVersion[]> {
  const db = queryBuilder(store);
  const latest = await db
    .selectFrom('entities')
    .select(['seq', 'updated_at as stored_at', 'data'])
    .where('source', '=', source)
    .where('entity_key', '=', key)
    .executeTakeFirst();
  if (!latest) return [];
  const earlier = await db
    .selectFrom('snapshots')
    .select(['seq', 'stored_at', 'data'])
    .where('source', '=', source)
    .where('entity_key', '=', key)
    .where('seq', '<', latest.seq)
    .orderBy('seq', 'desc')
    .limit(Math.max(0, limit - 1))
    .execute();
  return [...earlier.reverse(), latest].slice(-limit);
}

/** The rules' memory of one entity (armed or not, last fired), by rule. */
export async function entityRuleStates(store: Store, source: string, key: string): Promise<Array<Pick<RuleStateTable, 'rule' | 'armed' | 'last_fired_at'>>> {
  return queryBuilder(store)
    .selectFrom('rule_state')
    .select(['rule', 'armed', 'last_fired_at'])
    .where('source', '=', source)
    .where('entity_key', '=', key)
    .orderBy('rule')
    .execute();
}

/** How many entities each source holds. */
export async function entityCounts(store: Store): Promise<Map<string, number>> {
  const rows = await queryBuilder(store)
    .selectFrom('entities')
    .select((eb) => ['source', eb.fn.countAll<number>().as('count')])
    .groupBy('source')
    .execute();
  return new Map(rows.map((row) => [row.source, Number(row.count)]));
}

/** Alerts fired on one entity by the given rules, oldest first, each with the snapshot it fired on. */
export async function alertsOnEntity(
  store: Store,
  source: string,
  key: string,
  rules: readonly string[],
): Promise<Array<{ id: string; rule: string; severity: string; fired_at: string; seq: number; summary: string }>> {
  if (rules.length === 0) return [];
  return queryBuilder(store)
    .selectFrom('alerts')
    .select(['id', 'rule', 'severity', 'fired_at', 'seq', 'summary'])
    .where('source', '=', source)
    .where('entity', '=', key)
    .where('rule', 'in', rules)
    .orderBy('seq')
    .orderBy('rule')
    .execute();
}
