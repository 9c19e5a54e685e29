// Snapshots, rule memory and alerts: what the planner reads (loadPlanInputs) and writes
// (applyPlan), a page at a time, a few statements per page.
import type { Kysely } from 'kysely';
import type { EntityMemory, Plan, SnapshotWrite, StoredSnapshot } from '../core/plan.ts';
import type { Alert, PageMemory, RuleState, Snapshot, SourceName } from '../core/types.ts';
import { chunked, compiledRows, inWriteTransaction, ROWS_PER_STATEMENT } from './batch.ts';
import { queryBuilder, type Store } from './connection.ts';
import type { AlertsTable, Database, DeliveriesTable, EntitiesTable, RuleStateTable, SnapshotsTable } from './schema.ts';

export interface PlanInputs {
  previous: Map<string, StoredSnapshot>;
  memory: Map<string, EntityMemory>;
}

/**
 * The latest stored snapshot and the rules' memory of each of `keys` (one select of each per slice
 * of keys); the memory only when asked, as a baseline judges nothing. `source` may be a
 * market-search feed (Plan.feed).
 */
export async function loadPlanInputs(store: Store, source: string, keys: readonly string[], options: { memory?: boolean } = {}): Promise<PlanInputs> {
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
    if (options.memory === false) continue;
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

/** Every entity of a market-search feed (or a source) with its latest snapshot, parsed. */
export async function feedSnapshots(store: Store, feed: string): Promise<Map<string, Snapshot>> {
  const rows = await queryBuilder(store).selectFrom('entities').select(['entity_key', 'data']).where('source', '=', feed).execute();
  return new Map(rows.map((row) => [row.entity_key, JSON.parse(row.data) as Snapshot]));
}

/** Which of `feeds` have completed a poll (so that their next poll is no baseline). */
export async function polledFeeds(store: Store, feeds: readonly string[]): Promise<Set<string>> {
  const polled = new Set<string>();
  for (const slice of chunked([...new Set(feeds)])) {
    const rows = await queryBuilder(store).selectFrom('source_state').select('source').where('source', 'in', slice).where('baseline_at', 'is not', null).execute();
    for (const row of rows) polled.add(row.source);
  }
  return polled;
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
  const { at } = plan;
  const source = plan.feed ?? plan.source;
  const latest = new Map<string, SnapshotWrite>();
  // An entity whose first write of the page is not its first snapshot has a stored latest, which
  // becomes history (a new entity has none to move).
  const archived: string[] = [];
  for (const write of plan.snapshots) {
    if (!latest.has(write.key) && write.seq > 1) archived.push(write.key);
    latest.set(write.key, write);
  }
  for (const slice of chunked(archived)) {
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
  // Versions this page superseded itself go to history directly.
  const superseded = plan.snapshots.filter((write) => latest.get(write.key) !== write);
  await insertSnapshots(trx, superseded.map((w) => ({ source, entity_key: w.key, seq: w.seq, data: w.text, stored_at: at })));
  await upsertEntities(trx, [...latest.values()].map((w) => ({ source, entity_key: w.key, seq: w.seq, data: w.text, first_seen_at: at, updated_at: at })));
}

const insertSnapshots = compiledRows<SnapshotsTable>(['source', 'entity_key', 'seq', 'data', 'stored_at'], (db, rows) =>
  db
    .insertInto('snapshots')
    .values(rows)
    .onConflict((oc) => oc.doNothing()),
);

const upsertEntities = compiledRows<EntitiesTable>(['source', 'entity_key', 'seq', 'data', 'first_seen_at', 'updated_at'], (db, rows) =>
  db
    .insertInto('entities')
    .values(rows)
    .onConflict((oc) =>
      oc.columns(['source', 'entity_key']).doUpdateSet((eb) => ({
        seq: eb.ref('excluded.seq'),
        data: eb.ref('excluded.data'),
        updated_at: eb.ref('excluded.updated_at'),
      })),
    ),
);

const upsertMemory = compiledRows<RuleStateTable>(['rule', 'source', 'entity_key', 'armed', 'last_fired_at'], (db, rows) =>
  db
    .insertInto('rule_state')
    .values(rows)
    .onConflict((oc) =>
      oc.columns(['rule', 'source', 'entity_key']).doUpdateSet((eb) => ({
        armed: eb.ref('excluded.armed'),
        last_fired_at: eb.ref('excluded.last_fired_at'),
      })),
    ),
);

const insertAlerts = compiledRows<AlertsTable>(['id', 'rule', 'severity', 'source', 'entity', 'trigger', 'fired_at', 'summary', 'changes', 'seq', 'feed'], (db, rows) =>
  db
    .insertInto('alerts')
    .values(rows)
    .onConflict((oc) => oc.column('id').doNothing()),
);

type NewDelivery = Pick<DeliveriesTable, 'alert_id' | 'channel' | 'status' | 'digest_id' | 'next_attempt_at' | 'created_at'>;

const insertDeliveries = compiledRows<NewDelivery>(['alert_id', 'channel', 'status', 'digest_id', 'next_attempt_at', 'created_at'], (db, rows) =>
  db
    .insertInto('deliveries')
    .values(rows)
    .onConflict((oc) => oc.doNothing()),
);

async function writeMemory(trx: Kysely<Database>, plan: Plan): Promise<void> {
  await upsertMemory(
    trx,
    plan.memory.map((m) => ({ rule: m.rule, source: plan.feed ?? plan.source, entity_key: m.key, armed: m.state.armed ? 1 : 0, last_fired_at: m.state.lastFiredAt })),
  );
}

/** An alert as its row. Its `current` is the entity's snapshot `seq` (in `feed`), stored once however many rules fire on it. */
function alertRow(alert: Alert, seq: number, feed: string | undefined): AlertsTable {
  const { id, rule, severity, source, entity, trigger, fired_at, summary } = alert;
  return { id, rule, severity, source, entity, trigger, fired_at, summary, changes: JSON.stringify(alert.changes), seq, feed: feed ?? null };
}

async function writeAlerts(trx: Kysely<Database>, plan: Plan): Promise<Set<string>> {
  // An alert already stored (its id is derived from its cause) is left as it is, with its
  // deliveries. The write lock is held, so what is not stored yet is stored by this transaction.
  // (Read first rather than RETURNING from the insert: that made the alert storm ~10% slower.)
  const already = new Set<string>();
  for (const slice of chunked(plan.alerts.map(({ alert }) => alert.id))) {
    for (const row of await trx.selectFrom('alerts').select('id').where('id', 'in', slice).execute()) already.add(row.id);
  }
  const fresh = plan.alerts.filter(({ alert }) => !already.has(alert.id));
  // A slice at a time, so that each alert's changes serialized for its row die young.
  for (let i = 0; i < fresh.length; i += ROWS_PER_STATEMENT) {
    await insertAlerts(trx, fresh.slice(i, i + ROWS_PER_STATEMENT).map(({ alert, seq }) => alertRow(alert, seq, plan.feed)));
  }
  const stored = new Set(fresh.map(({ alert }) => alert.id));
  await insertDeliveries(
    trx,
    plan.deliveries
      .filter((d) => stored.has(d.alertId))
      .map((d) => ({ alert_id: d.alertId, channel: d.channel, status: d.status, digest_id: null, next_attempt_at: d.status === 'digest' ? null : plan.at, created_at: plan.at })),
  );
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
  for (const feed of remembered.polledFeeds ?? []) {
    await trx
      .insertInto('source_state')
      .values({ source: feed, baseline_at: at, watermark: null, last_success_at: at, last_error_at: null, last_error: null })
      .onConflict((oc) => oc.column('source').doUpdateSet((eb) => ({ baseline_at: eb.fn.coalesce('source_state.baseline_at', eb.val(at)), last_success_at: at })))
      .execute();
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
            .where((eb) => eb(eb.fn.coalesce('alerts.feed', 'alerts.source'), '=', eb.ref('snapshots.source')))
            .whereRef('alerts.entity', '=', 'snapshots.entity_key')
            .whereRef('alerts.seq', '=', 'snapshots.seq'),
        ),
      ),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
