// Repository functions: source state, report candidates, runs, alert listings, meta. Typed kysely
// queries, one small function per need.
import { sql, type ExpressionBuilder } from 'kysely';
import type { Explanation, ReportCandidate, Silence, SilenceMatchers, Snapshot, SourceName } from '../core/types.ts';
import { inWriteTransaction } from './batch.ts';
import { queryBuilder, type Store } from './connection.ts';
import type { AlertsTable, Database, DeliveriesTable, DigestsTable, RunsTable, SilencesTable, SourceStateTable } from './schema.ts';

export async function getSourceState(store: Store, source: SourceName): Promise<SourceStateTable | undefined> {
  return queryBuilder(store).selectFrom('source_state').selectAll().where('source', '=', source).executeTakeFirst();
}

export async function listSourceStates(store: Store): Promise<SourceStateTable[]> {
  return queryBuilder(store).selectFrom('source_state').selectAll().orderBy('source').execute();
}

/** Records a successful poll; the baseline time is set once and the watermark only when given. */
export async function markPollSuccess(
  store: Store,
  source: SourceName,
  now: Date,
  update: { watermark?: string | null } = {},
): Promise<void> {
  const at = now.toISOString();
  await queryBuilder(store)
    .insertInto('source_state')
    .values({
      source,
      baseline_at: at,
      watermark: update.watermark ?? null,
      last_success_at: at,
      last_error_at: null,
      last_error: null,
      failures: 0,
    })
    .onConflict((oc) =>
      oc.column('source').doUpdateSet((eb) => ({
        baseline_at: eb.fn.coalesce('source_state.baseline_at', eb.val(at)),
        watermark: update.watermark === undefined ? eb.ref('source_state.watermark') : eb.val(update.watermark),
        last_success_at: at,
        failures: 0,
      })),
    )
    .execute();
}

/** Records a failed poll; returns the failed polls in a row, this one included. */
export async function markPollError(store: Store, source: SourceName, now: Date, error: string): Promise<number> {
  const at = now.toISOString();
  const row = await queryBuilder(store)
    .insertInto('source_state')
    .values({ source, baseline_at: null, watermark: null, last_success_at: null, last_error_at: at, last_error: error, failures: 1 })
    .onConflict((oc) => oc.column('source').doUpdateSet((eb) => ({ last_error_at: at, last_error: error, failures: eb('source_state.failures', '+', 1) })))
    .returning('failures')
    .executeTakeFirst();
  return row?.failures ?? 1;
}

/**
 * A source's health changed (`degraded` after failed polls, `recovered` at the next good one): the
 * state is recorded and one notice is stored for each channel, in one transaction, once per
 * outage (the notice id derives from the source and when the outage was declared). Returns
 * whether it changed now.
 */
export async function recordSourceHealth(
  store: Store,
  change: { source: SourceName; status: 'degraded' | 'recovered'; error: string | null; channels: readonly string[]; noticeId: (degradedAt: string) => string },
  now: Date,
): Promise<boolean> {
  const at = now.toISOString();
  return inWriteTransaction(queryBuilder(store), async (trx) => {
    const state = await trx.selectFrom('source_state').select('health').where('source', '=', change.source).executeTakeFirst();
    const degradedAt = state?.health ?? null;
    if (change.status === 'degraded' ? degradedAt !== null : degradedAt === null) return false;
    const since = degradedAt ?? at;
    await trx.updateTable('source_state').set({ health: change.status === 'degraded' ? at : null }).where('source', '=', change.source).execute();
    const id = change.noticeId(`${since}\u0000${change.status}`);
    const body = JSON.stringify({ source: change.source, status: change.status, error: change.error, at: at.replace(/\.\d{3}Z$/, 'Z') });
    for (const channel of change.channels) {
      await trx
        .insertInto('notices')
        .values({ id: `${id}/${channel}`, notice_id: id, kind: 'health', alert_id: null, channel, body, status: 'pending', next_attempt_at: at, created_at: at })
        .onConflict((oc) => oc.doNothing())
        .execute();
    }
    return true;
  });
}

/** One agent question counted against the day's limit (UTC days); false when the limit is reached. */
export async function takeAgentQuestion(store: Store, now: Date, limit: number): Promise<boolean> {
  const key = `agent_questions:${now.toISOString().slice(0, 10)}`;
  return inWriteTransaction(queryBuilder(store), async (trx) => {
    const row = await trx.selectFrom('meta').select('value').where('key', '=', key).executeTakeFirst();
    const asked = Number(row?.value ?? 0);
    if (asked >= limit) return false;
    await trx
      .insertInto('meta')
      .values({ key, value: String(asked + 1) })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value: String(asked + 1) }))
      .execute();
    return true;
  });
}

/** Stores the agent's answer (or that there is none) with the alert, once. */
export async function saveExplanation(store: Store, alertId: string, explanation: Explanation | null, now: Date): Promise<void> {
  await queryBuilder(store)
    .updateTable('alerts')
    .set({ explanation: explanation === null ? null : JSON.stringify(explanation), explained_at: now.toISOString() })
    .where('id', '=', alertId)
    .where('explained_at', 'is', null)
    .execute();
}

// ---------------------------------------------------------------------------------------------
// Silences

function rowToSilence(row: SilencesTable): Silence {
  return { id: row.id, matchers: JSON.parse(row.matchers) as SilenceMatchers, starts_at: row.starts_at, ends_at: row.ends_at, comment: row.comment, created_by: row.created_by };
}

export async function insertSilence(store: Store, silence: Silence, now: Date): Promise<void> {
  await queryBuilder(store)
    .insertInto('silences')
    .values({ ...silence, matchers: JSON.stringify(silence.matchers), created_at: now.toISOString() })
    .execute();
}

/** Silences active now, soonest ending first. */
export async function activeSilences(store: Store, now: Date): Promise<Silence[]> {
  const at = now.toISOString();
  const rows = await queryBuilder(store).selectFrom('silences').selectAll().where('starts_at', '<=', at).where('ends_at', '>', at).orderBy('ends_at').orderBy('id').execute();
  return rows.map(rowToSilence);
}

/** Silences that ended after `since` or have not ended (active, future and recently expired), newest first. */
export async function silencesEndingAfter(store: Store, since: Date): Promise<Silence[]> {
  const rows = await queryBuilder(store).selectFrom('silences').selectAll().where('ends_at', '>', since.toISOString()).orderBy('starts_at', 'desc').orderBy('id').execute();
  return rows.map(rowToSilence);
}

/** Ends a silence now; false when there is no silence of that id still active (or to come). */
export async function expireSilence(store: Store, id: string, now: Date): Promise<boolean> {
  const at = now.toISOString();
  return inWriteTransaction(queryBuilder(store), async (trx) => {
    const result = await trx.updateTable('silences').set({ ends_at: at }).where('id', '=', id).where('ends_at', '>', at).executeTakeFirst();
    // One that had not started yet never will.
    await trx.updateTable('silences').set({ starts_at: at }).where('id', '=', id).where('starts_at', '>', at).execute();
    return Number(result.numUpdatedRows) > 0;
  });
}

export async function insertRun(store: Store, run: Omit<RunsTable, 'updated_at'>): Promise<void> {
  await queryBuilder(store)
    .insertInto('runs')
    .values({ ...run, updated_at: run.created_at })
    .onConflict((oc) => oc.column('run_id').doNothing())
    .execute();
}

export async function listRuns(store: Store, where: { status?: string } = {}): Promise<RunsTable[]> {
  let query = queryBuilder(store).selectFrom('runs').selectAll().orderBy('created_at', 'desc').orderBy('run_id');
  if (where.status) query = query.where('status', '=', where.status);
  return query.execute();
}

/** Snapshots read per query while report candidates are looked through (most polls stop early). */
const CANDIDATES_PER_READ = 100;

/**
 * The events whose reports may be checked, least recently checked first (never checked first of
 * all), each with its latest snapshot; read lazily, as the caller stops once it has enough.
 */
export async function* reportCandidates(store: Store): AsyncGenerator<ReportCandidate> {
  const db = queryBuilder(store);
  // Sort the keys only: sorting the snapshots' text along with them (tens of MB) dominated the poll.
  const order = await db
    .selectFrom('entities as e')
    .leftJoin('report_checks as c', 'c.event_ticker', 'e.entity_key')
    .select(['e.entity_key as ticker', 'c.venue', 'c.event_key', 'c.last_checked_at', 'c.found'])
    .where('e.source', '=', 'events')
    .orderBy('c.last_checked_at', (ob) => ob.asc().nullsFirst())
    .orderBy('e.entity_key')
    .execute();
  for (let i = 0; i < order.length; i += CANDIDATES_PER_READ) {
    const slice = order.slice(i, i + CANDIDATES_PER_READ);
    const rows = await db
      .selectFrom('entities')
      .select(['entity_key', 'data'])
      .where('source', '=', 'events')
      .where('entity_key', 'in', slice.map((row) => row.ticker))
      .execute();
    const data = new Map(rows.map((row) => [row.entity_key, row.data]));
    for (const row of slice) {
      const text = data.get(row.ticker);
      if (text === undefined) continue; // removed since the keys were read
      yield {
        event: JSON.parse(text) as Snapshot,
        check: { eventTicker: row.ticker, venue: row.venue, eventKey: row.event_key, checkedAt: row.last_checked_at, found: row.found === null ? null : row.found === 1 },
      };
    }
  }
}

/** What `alerts --json` prints of one alert. */
export type AlertListing = Pick<AlertsTable, 'id' | 'rule' | 'severity' | 'source' | 'entity' | 'trigger' | 'fired_at' | 'resolved_at' | 'summary'> & {
  deliveries: Array<Pick<DeliveriesTable, 'channel' | 'status' | 'last_error'> & { attempts: number }>;
};

/** Narrows a listing of alerts; every field given must hold. */
export interface AlertFilter {
  rule?: string;
  source?: string;
  entity?: string;
  severity?: string;
  /** Alerts with at least one delivery in this status, as listed (`digest` while its batch waits). */
  status?: string;
  /** A cursor: only alerts listed after this one (older, newest first). */
  before?: string;
}

type DeliveryRows = ExpressionBuilder<Database & { d: DeliveriesTable; g: DigestsTable }, 'd' | 'g'>;

/**
 * A delivery's status as listed: an alert waiting in a digest batch shows `digest` until the batch
 * is sent, then the batch's outcome.
 */
function listedStatus(eb: DeliveryRows) {
  return eb.case().when('g.id', 'is', null).then(eb.ref('d.status')).when('g.status', '=', 'pending').then(eb.val('digest')).else(eb.ref('g.status')).end().$notNull();
}

/**
 * Alerts, newest first, each with its deliveries: the latest `limit` that pass `filter` (none when
 * the `before` cursor names no stored alert: callers that must tell check `alertExists`).
 */
export async function listAlerts(store: Store, limit: number, filter: AlertFilter = {}): Promise<AlertListing[]> {
  const db = queryBuilder(store);
  let query = db
    .selectFrom('alerts')
    .select(['id', 'rule', 'severity', 'source', 'entity', 'trigger', 'fired_at', 'resolved_at', 'summary'])
    .orderBy('fired_at', 'desc')
    // fired_at has whole seconds: alerts of one second list newest stored first.
    .orderBy(sql`rowid`, 'desc')
    .limit(limit);
  if (filter.rule !== undefined) query = query.where('rule', '=', filter.rule);
  if (filter.source !== undefined) query = query.where('source', '=', filter.source);
  if (filter.entity !== undefined) query = query.where('entity', '=', filter.entity);
  if (filter.severity !== undefined) query = query.where('severity', '=', filter.severity);
  if (filter.status !== undefined) {
    const status = filter.status;
    query = query.where(({ exists, selectFrom }) =>
      exists(
        selectFrom('deliveries as d')
          .leftJoin('digests as g', 'g.id', 'd.digest_id')
          .select('d.id')
          .whereRef('d.alert_id', '=', 'alerts.id')
          .where((eb) => eb(listedStatus(eb), '=', status)),
      ),
    );
  }
  if (filter.before !== undefined) {
    // The cursor's place in the order above: older, or as old and stored before it.
    const cursor = await db.selectFrom('alerts').select(['fired_at', sql<number>`rowid`.as('position')]).where('id', '=', filter.before).executeTakeFirst();
    if (!cursor) return [];
    query = query.where((eb) =>
      eb.or([eb('fired_at', '<', cursor.fired_at), eb.and([eb('fired_at', '=', cursor.fired_at), eb(sql`rowid`, '<', cursor.position)])]),
    );
  }
  const alerts = await query.execute();
  if (alerts.length === 0) return [];
  const deliveries = await db
    .selectFrom('deliveries as d')
    .leftJoin('digests as g', 'g.id', 'd.digest_id')
    // The batch's attempts and last error once the alert went into a batch.
    .select((eb) => [
      'd.alert_id',
      'd.channel',
      listedStatus(eb).as('status'),
      eb.fn.coalesce('g.attempts', 'd.attempts').as('attempts'),
      eb.case().when('g.id', 'is', null).then(eb.ref('d.last_error')).else(eb.ref('g.last_error')).end().as('last_error'),
    ])
    .where(
      'd.alert_id',
      'in',
      alerts.map((a) => a.id),
    )
    .orderBy('d.id')
    .execute();
  return alerts.map((alert) => ({
    ...alert,
    deliveries: deliveries
      .filter((d) => d.alert_id === alert.id)
      .map(({ channel, status, attempts, last_error }) => ({ channel, status, attempts, last_error })),
  }));
}

/** Whether an alert with this id is stored. */
export async function alertExists(store: Store, id: string): Promise<boolean> {
  return (await queryBuilder(store).selectFrom('alerts').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}

/** Alerts per rule and UTC hour (`2026-11-21T18`) fired at `since` or later. */
export async function alertsPerHour(store: Store, since: Date): Promise<Array<{ rule: string; hour: string; count: number }>> {
  const rows = await queryBuilder(store)
    .selectFrom('alerts')
    .select((eb) => ['rule', eb.fn<string>('substr', ['fired_at', eb.val(1), eb.val(13)]).as('hour'), eb.fn.countAll<number>().as('count')])
    .where('fired_at', '>=', since.toISOString())
    .groupBy(['rule', 'hour'])
    .execute();
  return rows.map((row) => ({ rule: row.rule, hour: row.hour, count: Number(row.count) }));
}

/** When each rule last fired. */
export async function lastFiredByRule(store: Store): Promise<Map<string, string>> {
  const rows = await queryBuilder(store)
    .selectFrom('alerts')
    .select((eb) => ['rule', eb.fn.max('fired_at').as('last')])
    .groupBy('rule')
    .execute();
  return new Map(rows.map((row) => [row.rule, row.last]));
}

export async function getMeta(store: Store, key: string): Promise<string | undefined> {
  return (await queryBuilder(store).selectFrom('meta').select('value').where('key', '=', key).executeTakeFirst())?.value;
}

/** Sets a fact, or removes it with `undefined`. */
export async function setMeta(store: Store, key: string, value: string | undefined): Promise<void> {
  if (value === undefined) {
    await queryBuilder(store).deleteFrom('meta').where('key', '=', key).execute();
    return;
  }
  await queryBuilder(store)
    .insertInto('meta')
    .values({ key, value })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
    .execute();
}
