// Snapshots, rule memory and alerts: what the planner reads (loadPlanInputs) and writes
// (applyPlan), a page at a time, a few statements per page.
import type { Kysely } from 'kysely';
import type { EntityMemory, OpenAlerts, Plan, SnapshotWrite, StoredSnapshot, Timer } from '../core/plan.ts';
import type { Alert, Inhibition, PageMemory, RuleState, Snapshot, SourceName } from '../core/types.ts';
import { chunked, compiledRows, inWriteTransaction, ROWS_PER_STATEMENT } from './batch.ts';
import { queryBuilder, type Store } from './connection.ts';
import type { AlertsTable, Database, DeliveriesTable, EntitiesTable, RuleStateTable, SnapshotsTable, TimersTable } from './schema.ts';

export interface PlanInputs {
  previous: Map<string, StoredSnapshot>;
  memory: Map<string, EntityMemory>;
  timers: Map<string, Map<string, Timer>>;
  open: Map<string, OpenAlerts>;
}

export interface PlanInputOptions {
  /** The rules' memory; not for a baseline, which judges nothing. */
  memory?: boolean;
  /** The rules' pending timers. */
  timers?: boolean;
  /** The open alerts of these rules (those that resolve). */
  openOf?: readonly string[];
}

/**
 * The latest stored snapshot and the rules' memory of each of `keys` (one select of each per slice
 * of keys); the memory, timers and open alerts only when asked. `source` may be a market-search
 * feed (Plan.feed).
 */
export async function loadPlanInputs(store: Store, source: string, keys: readonly string[], options: PlanInputOptions = {}): Promise<PlanInputs> {
  const db = queryBuilder(store);
  const inputs: PlanInputs = { previous: new Map(), memory: new Map(), timers: new Map(), open: new Map() };
  for (const slice of chunked([...new Set(keys)])) {
    if (options.timers) {
      const timers = await db.selectFrom('timers').selectAll().where('source', '=', source).where('entity_key', 'in', slice).execute();
      for (const row of timers) byEntity(inputs.timers, row.entity_key).set(row.rule, rowToTimer(row));
    }
    if (options.openOf !== undefined && options.openOf.length > 0) {
      const open = await db
        .selectFrom('alerts')
        .select(['id', 'rule', 'entity'])
        // An alert of a market-search feed is under its feed; the others under their source.
        .where((eb) => eb.or([eb('feed', '=', source), eb.and([eb('feed', 'is', null), eb('source', '=', source)])]))
        .where('entity', 'in', slice)
        .where('rule', 'in', [...options.openOf])
        .where('resolved_at', 'is', null)
        .orderBy('fired_at')
        .execute();
      // The latest firing of a rule is the one open (an older one that never resolved is superseded).
      for (const row of open) byEntity(inputs.open as Map<string, Map<string, string>>, row.entity).set(row.rule, row.id);
    }
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
      byEntity(inputs.memory as Map<string, Map<string, RuleState>>, row.entity_key).set(row.rule, { armed: row.armed === 1, lastFiredAt: row.last_fired_at });
    }
  }
  return inputs;
}

function byEntity<V>(map: Map<string, Map<string, V>>, key: string): Map<string, V> {
  let inner = map.get(key);
  if (!inner) map.set(key, (inner = new Map<string, V>()));
  return inner;
}

function rowToTimer(row: TimersTable): Timer {
  const timer: Timer = { rule: row.rule, key: row.entity_key, kind: row.kind as Timer['kind'], dueAt: row.due_at, cause: row.cause };
  if (row.from_value !== null) timer.from = JSON.parse(row.from_value) as unknown;
  return timer;
}

/**
 * A source's (or a market-search feed's) timers whose time has come (by the due-time index), soonest
 * first; with `keys`, those of these entities only.
 */
export async function dueTimers(store: Store, source: string, now: Date, options: { limit?: number; keys?: readonly string[] } = {}): Promise<Timer[]> {
  const { limit = 5_000, keys } = options;
  if (keys?.length === 0) return [];
  let query = queryBuilder(store).selectFrom('timers').selectAll().where('source', '=', source).where('due_at', '<=', now.toISOString());
  if (keys !== undefined) query = query.where('entity_key', 'in', [...new Set(keys)]);
  const rows = await query.orderBy('due_at').limit(limit).execute();
  return rows.map(rowToTimer);
}

/** A rule's pending dwell for one entity (`why` shows its progress), if any. */
export async function pendingDwell(store: Store, rule: string, source: SourceName, entity: string): Promise<Timer | undefined> {
  const row = await queryBuilder(store)
    .selectFrom('timers')
    .selectAll()
    .where('rule', '=', rule)
    .where('source', '=', source)
    .where('entity_key', '=', entity)
    .where('kind', '=', 'dwell')
    .executeTakeFirst();
  return row ? rowToTimer(row) : undefined;
}

/**
 * The latest stored snapshot of the same event in each of `sources`, for the entities whose event
 * ticker is given: events by key, reports through the report checks (venue and key of the event),
 * runs through the recorded runs (the newest run of the event).
 */
export async function relatedSnapshots(store: Store, tickers: ReadonlyMap<string, string>, sources: readonly SourceName[]): Promise<Map<string, Map<SourceName, { key: string; data: Snapshot }>>> {
  const db = queryBuilder(store);
  const related = new Map<string, Map<SourceName, { key: string; data: Snapshot }>>();
  const wanted = [...new Set(tickers.values())];
  if (wanted.length === 0) return related;
  const byTicker = new Map<SourceName, Map<string, string>>();
  for (const source of sources) {
    const keyOf = new Map<string, string>();
    for (const slice of chunked(wanted)) {
      if (source === 'events') for (const ticker of slice) keyOf.set(ticker, ticker);
      else if (source === 'reports') {
        const rows = await db.selectFrom('report_checks').select(['event_ticker', 'venue', 'event_key']).where('event_ticker', 'in', slice).execute();
        for (const row of rows) if (row.venue !== null && row.event_key !== null) keyOf.set(row.event_ticker, `${row.venue}/${row.event_key}`);
      } else if (source === 'runs') {
        const rows = await db.selectFrom('runs').select(['run_id', 'event_key']).where('event_key', 'in', slice).orderBy('created_at', 'desc').orderBy('run_id').execute();
        for (const row of rows) if (!keyOf.has(row.event_key)) keyOf.set(row.event_key, row.run_id);
      }
    }
    byTicker.set(source, keyOf);
    const latest = await latestSnapshots(store, source, [...keyOf.values()]);
    for (const [entity, ticker] of tickers) {
      const key = keyOf.get(ticker);
      const data = key === undefined ? undefined : latest.get(key);
      if (key !== undefined && data !== undefined) byEntity(related, entity).set(source, { key, data });
    }
  }
  return related;
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
    await writeTimers(trx, plan);
    const stored = await writeAlerts(trx, plan);
    await writeResolutions(trx, plan);
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

type NewAlert = Omit<AlertsTable, 'resolved_at' | 'explanation' | 'explained_at'>;

const insertAlerts = compiledRows<NewAlert>(['id', 'rule', 'severity', 'source', 'entity', 'trigger', 'fired_at', 'summary', 'changes', 'seq', 'inhibited_by', 'feed'], (db, rows) =>
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
function alertRow(alert: Alert, seq: number, inhibitedBy: Inhibition | undefined, feed: string | undefined): NewAlert {
  const { id, rule, severity, source, entity, trigger, fired_at, summary } = alert;
  return {
    id,
    rule,
    severity,
    source,
    entity,
    trigger,
    fired_at,
    summary,
    changes: JSON.stringify(alert.changes),
    seq,
    inhibited_by: inhibitedBy ? JSON.stringify(inhibitedBy) : null,
    feed: feed ?? null,
  };
}

const upsertTimers = compiledRows<TimersTable>(['rule', 'source', 'entity_key', 'kind', 'due_at', 'cause', 'from_value'], (db, rows) =>
  db
    .insertInto('timers')
    .values(rows)
    .onConflict((oc) =>
      oc.columns(['rule', 'source', 'entity_key']).doUpdateSet((eb) => ({
        kind: eb.ref('excluded.kind'),
        due_at: eb.ref('excluded.due_at'),
        cause: eb.ref('excluded.cause'),
        from_value: eb.ref('excluded.from_value'),
      })),
    ),
);

/** Timers are kept where the entities are: under the plan's feed, if any (Plan.feed). */
async function writeTimers(trx: Kysely<Database>, plan: Plan): Promise<void> {
  const storedAs = plan.feed ?? plan.source;
  for (const { rule, key } of plan.clearedTimers ?? []) {
    await trx.deleteFrom('timers').where('rule', '=', rule).where('source', '=', storedAs).where('entity_key', '=', key).execute();
  }
  await upsertTimers(
    trx,
    (plan.timers ?? []).map((t) => ({
      rule: t.rule,
      source: storedAs,
      entity_key: t.key,
      kind: t.kind,
      due_at: t.dueAt,
      cause: t.cause,
      from_value: t.from === undefined ? null : JSON.stringify(t.from),
    })),
  );
}

/**
 * Resolutions: the alert marked resolved, the resolution stored with its own id, and a notice for
 * each channel that delivered the alert or may still deliver it (a notice waits for its alert's
 * delivery; see dueSends). Once only: an alert already resolved is left as it is.
 */
async function writeResolutions(trx: Kysely<Database>, plan: Plan): Promise<void> {
  for (const resolution of plan.resolutions ?? []) {
    const updated = await trx
      .updateTable('alerts')
      .set({ resolved_at: resolution.resolvedAt })
      .where('id', '=', resolution.alertId)
      .where('resolved_at', 'is', null)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) continue;
    await trx
      .insertInto('resolutions')
      .values({ id: resolution.id, alert_id: resolution.alertId, resolved_at: resolution.resolvedAt, summary: resolution.summary, changes: JSON.stringify(resolution.changes), seq: resolution.seq })
      .onConflict((oc) => oc.doNothing())
      .execute();
    const channels = await trx
      .selectFrom('deliveries')
      .select('channel')
      .where('alert_id', '=', resolution.alertId)
      .where('status', 'in', ['pending', 'delivered'])
      .orderBy('id')
      .execute();
    for (const { channel } of channels) {
      await trx
        .insertInto('notices')
        .values({
          id: `${resolution.id}/${channel}`,
          notice_id: resolution.id,
          kind: 'resolved',
          alert_id: resolution.alertId,
          channel,
          body: resolution.id,
          status: 'pending',
          next_attempt_at: plan.at,
          created_at: plan.at,
        })
        .onConflict((oc) => oc.doNothing())
        .execute();
    }
  }
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
    await insertAlerts(trx, fresh.slice(i, i + ROWS_PER_STATEMENT).map(({ alert, seq, inhibitedBy }) => alertRow(alert, seq, inhibitedBy, plan.feed)));
  }
  const stored = new Set(fresh.map(({ alert }) => alert.id));
  await insertDeliveries(
    trx,
    plan.deliveries
      .filter((d) => stored.has(d.alertId))
      .map((d) => ({ alert_id: d.alertId, channel: d.channel, status: d.status, digest_id: null, next_attempt_at: d.status === 'pending' ? plan.at : null, created_at: plan.at })),
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
      .values({ source: feed, baseline_at: at, watermark: null, last_success_at: at, last_error_at: null, last_error: null, failures: 0 })
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
