// Snapshots, rule memory and alerts: what the planner reads (loadPlanInputs) and writes
// (applyPlan), a page at a time, a few statements per page.
import type { Kysely } from 'kysely';
import type { EntityMemory, Plan, StoredSnapshot } from '../core/plan.ts';
import type { Alert, PageMemory, RuleState, Snapshot, SourceName } from '../core/types.ts';
import { chunked, inWriteTransaction } from './batch.ts';
import { queryBuilder, type Store } from './connection.ts';
import type { AlertsTable, Database } from './schema.ts';

export interface PlanInputs {
  previous: Map<string, StoredSnapshot>;
  memory: Map<string, EntityMemory>;
}

/** The latest stored snapshot and the rules' memory of each of `keys` (one select of each per slice of keys). */
export async function loadPlanInputs(store: Store, source: SourceName, keys: readonly string[]): Promise<PlanInputs> {
  const db = queryBuilder(store);
  const inputs: PlanInputs = { previous: new Map(), memory: new Map() };
  for (const slice of chunked([...new Set(keys)])) {
    const entities = await db
      .selectFrom('entities')
      .select(['entity_key', 'seq', 'data'])
      .where('source', '=', source)
      .where('entity_key', 'in', slice)
      .execute();
    for (const row of entities) inputs.previous.set(row.entity_key, { seq: row.seq, text: row.data });
    const memory = await db
      .selectFrom('rule_state')
      .select(['entity_key', 'rule', 'armed', 'last_fired_at'])
      .where('source', '=', source)
      .where('entity_key', 'in', slice)
      .execute();
    for (const row of memory) {
      let byRule = inputs.memory.get(row.entity_key) as Map<string, RuleState> | undefined;
      if (!byRule) inputs.memory.set(row.entity_key, (byRule = new Map()));
      byRule.set(row.rule, { armed: row.armed === 1, lastFiredAt: row.last_fired_at });
    }
  }
  return inputs;
}

/** The latest stored snapshots of `keys` that have one, parsed. */
export async function latestSnapshots(store: Store, source: SourceName, keys: readonly string[]): Promise<Map<string, Snapshot>> {
  const latest = new Map<string, Snapshot>();
  for (const slice of chunked([...new Set(keys)])) {
    const rows = await queryBuilder(store)
      .selectFrom('entities')
      .select(['entity_key', 'data'])
      .where('source', '=', source)
      .where('entity_key', 'in', slice)
      .execute();
    for (const row of rows) latest.set(row.entity_key, JSON.parse(row.data) as Snapshot);
  }
  return latest;
}

/**
 * Applies a plan, and what its source learned with the page, in one transaction: the snapshots
 * (an entity's superseded latest moves to `snapshots`), the rules' memory, the alerts and their
 * deliveries. An alert already stored (its id is derived from its cause) is left as it is, with
 * its deliveries. Returns the ids of the alerts stored now.
 */
export async function applyPlan(store: Store, plan: Plan, remembered: PageMemory = {}): Promise<Set<string>> {
  return inWriteTransaction(queryBuilder(store), async (trx) => {
    await writeSnapshots(trx, plan);
    await writeMemory(trx, plan);
    const stored = await writeAlerts(trx, plan);
    await writePageMemory(trx, remembered, plan.at);
    return stored;
  });
}

async function writeSnapshots(trx: Kysely<Database>, plan: Plan): Promise<void> {
  const { source, at } = plan;
  const latest = new Map(plan.snapshots.map((write) => [write.key, write]));
  // History first: each entity's stored latest, then any version this page superseded itself.
  for (const slice of chunked([...latest.keys()])) {
    await trx
      .insertInto('snapshots')
      .columns(['source', 'entity_key', 'seq', 'data', 'stored_at'])
      .expression((eb) =>
        eb
          .selectFrom('entities')
          .select(['source', 'entity_key', 'seq', 'data', 'updated_at'])
          .where('source', '=', source)
          .where('entity_key', 'in', slice),
      )
      .onConflict((oc) => oc.doNothing())
      .execute();
  }
  const superseded = plan.snapshots.filter((write) => latest.get(write.key) !== write);
  for (const slice of chunked(superseded, 5)) {
    await trx
      .insertInto('snapshots')
      .values(slice.map((w) => ({ source, entity_key: w.key, seq: w.seq, data: w.text, stored_at: at })))
      .onConflict((oc) => oc.doNothing())
      .execute();
  }
  for (const slice of chunked([...latest.values()], 6)) {
    await trx
      .insertInto('entities')
      .values(slice.map((w) => ({ source, entity_key: w.key, seq: w.seq, data: w.text, first_seen_at: at, updated_at: at })))
      .onConflict((oc) =>
        oc.columns(['source', 'entity_key']).doUpdateSet((eb) => ({
          seq: eb.ref('excluded.seq'),
          data: eb.ref('excluded.data'),
          updated_at: eb.ref('excluded.updated_at'),
        })),
      )
      .execute();
  }
}

async function writeMemory(trx: Kysely<Database>, plan: Plan): Promise<void> {
  for (const slice of chunked(plan.memory, 5)) {
    await trx
      .insertInto('rule_state')
      .values(slice.map((m) => ({ rule: m.rule, source: plan.source, entity_key: m.key, armed: m.state.armed ? 1 : 0, last_fired_at: m.state.lastFiredAt })))
      .onConflict((oc) =>
        oc.columns(['rule', 'source', 'entity_key']).doUpdateSet((eb) => ({
          armed: eb.ref('excluded.armed'),
          last_fired_at: eb.ref('excluded.last_fired_at'),
        })),
      )
      .execute();
  }
}

/** An alert as its row. Its `current` is the entity's snapshot `seq`, stored once however many rules fire on it. */
function alertRow(alert: Alert, seq: number): AlertsTable {
  const { id, rule, severity, source, entity, trigger, fired_at, summary } = alert;
  return { id, rule, severity, source, entity, trigger, fired_at, summary, changes: JSON.stringify(alert.changes), seq };
}

async function writeAlerts(trx: Kysely<Database>, plan: Plan): Promise<Set<string>> {
  const stored = new Set<string>();
  for (const slice of chunked(plan.alerts, 10)) {
    const rows = await trx
      .insertInto('alerts')
      .values(slice.map(({ alert, seq }) => alertRow(alert, seq)))
      .onConflict((oc) => oc.column('id').doNothing())
      .returning('id')
      .execute();
    for (const row of rows) stored.add(row.id);
  }
  const deliveries = plan.deliveries.filter((d) => stored.has(d.alertId));
  for (const slice of chunked(deliveries, 6)) {
    await trx
      .insertInto('deliveries')
      .values(
        slice.map((d) => ({
          alert_id: d.alertId,
          channel: d.channel,
          status: d.status,
          digest_id: null,
          next_attempt_at: d.status === 'digest' ? null : plan.at,
          created_at: plan.at,
        })),
      )
      .onConflict((oc) => oc.doNothing())
      .execute();
  }
  return stored;
}

async function writePageMemory(trx: Kysely<Database>, remembered: PageMemory, at: string): Promise<void> {
  for (const check of remembered.reportChecks ?? []) {
    const row = {
      event_ticker: check.eventTicker,
      venue: check.venue,
      event_key: check.eventKey,
      last_checked_at: check.checkedAt,
      found: check.found === null ? null : check.found ? 1 : 0,
    };
    await trx
      .insertInto('report_checks')
      .values(row)
      .onConflict((oc) => oc.column('event_ticker').doUpdateSet({ venue: row.venue, event_key: row.event_key, last_checked_at: row.last_checked_at, found: row.found }))
      .execute();
  }
  for (const { runId, status } of remembered.runStatuses ?? []) {
    await trx.updateTable('runs').set({ status, updated_at: at }).where('run_id', '=', runId).execute();
  }
}

/** Deletes superseded snapshots stored before the retention, but those of alerts; the latest of every entity lives in `entities`. */
export async function pruneSnapshots(store: Store, olderThan: Date): Promise<number> {
  const result = await queryBuilder(store)
    .deleteFrom('snapshots')
    .where('stored_at', '<', olderThan.toISOString())
    // An alert's `current` is its snapshot: kept as long as the alert.
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('alerts')
            .select('alerts.id')
            .whereRef('alerts.source', '=', 'snapshots.source')
            .whereRef('alerts.entity', '=', 'snapshots.entity_key')
            .whereRef('alerts.seq', '=', 'snapshots.seq'),
        ),
      ),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
