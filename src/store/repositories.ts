// Repository functions off the hot path: typed kysely queries, one small function per need.
import { sql } from 'kysely';
import type { SourceName } from '../core/types.ts';
import type { Store } from './connection.ts';
import type { AlertsTable, DeliveriesTable, RunsTable, SourceStateTable } from './schema.ts';

export async function getSourceState(store: Store, source: SourceName): Promise<SourceStateTable | undefined> {
  return store.db.selectFrom('source_state').selectAll().where('source', '=', source).executeTakeFirst();
}

export async function listSourceStates(store: Store): Promise<SourceStateTable[]> {
  return store.db.selectFrom('source_state').selectAll().orderBy('source').execute();
}

/** Records a successful poll; the baseline time is set once and the watermark only when given. */
export async function markPollSuccess(
  store: Store,
  source: SourceName,
  now: Date,
  update: { watermark?: string | null } = {},
): Promise<void> {
  const at = now.toISOString();
  await store.db
    .insertInto('source_state')
    .values({
      source,
      baseline_at: at,
      watermark: update.watermark ?? null,
      last_success_at: at,
      last_error_at: null,
      last_error: null,
    })
    .onConflict((oc) =>
      oc.column('source').doUpdateSet((eb) => ({
        baseline_at: eb.fn.coalesce('source_state.baseline_at', eb.val(at)),
        watermark: update.watermark === undefined ? eb.ref('source_state.watermark') : eb.val(update.watermark),
        last_success_at: at,
      })),
    )
    .execute();
}

export async function markPollError(store: Store, source: SourceName, now: Date, error: string): Promise<void> {
  const at = now.toISOString();
  await store.db
    .insertInto('source_state')
    .values({ source, baseline_at: null, watermark: null, last_success_at: null, last_error_at: at, last_error: error })
    .onConflict((oc) => oc.column('source').doUpdateSet({ last_error_at: at, last_error: error }))
    .execute();
}

export async function insertRun(store: Store, run: Omit<RunsTable, 'updated_at'>): Promise<void> {
  await store.db
    .insertInto('runs')
    .values({ ...run, updated_at: run.created_at })
    .onConflict((oc) => oc.column('run_id').doNothing())
    .execute();
}

export async function listRuns(store: Store, where: { status?: string } = {}): Promise<RunsTable[]> {
  let query = store.db.selectFrom('runs').selectAll().orderBy('created_at', 'desc').orderBy('run_id');
  if (where.status) query = query.where('status', '=', where.status);
  return query.execute();
}

export async function updateRunStatus(store: Store, runId: string, status: string, now: Date): Promise<void> {
  await store.db
    .updateTable('runs')
    .set({ status, updated_at: now.toISOString() })
    .where('run_id', '=', runId)
    .execute();
}

/** Deletes superseded snapshots stored before the retention, but those of alerts; the latest of every entity lives in `entities`. */
export async function pruneSnapshots(store: Store, olderThan: Date): Promise<number> {
  const result = await store.db
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

/** What `alerts --json` prints of one alert. */
export type AlertListing = Omit<AlertsTable, 'changes' | 'seq'> & {
  deliveries: Array<Pick<DeliveriesTable, 'channel' | 'status' | 'last_error'> & { attempts: number }>;
};

/** Recent alerts, newest first, each with its deliveries. */
export async function listAlerts(store: Store, limit: number): Promise<AlertListing[]> {
  const alerts = await store.db
    .selectFrom('alerts')
    .select(['id', 'rule', 'severity', 'source', 'entity', 'trigger', 'fired_at', 'summary'])
    .orderBy('fired_at', 'desc')
    // fired_at has whole seconds: alerts of one second list newest stored first.
    .orderBy(sql`rowid`, 'desc')
    .limit(limit)
    .execute();
  if (alerts.length === 0) return [];
  const deliveries = await store.db
    .selectFrom('deliveries')
    .select(['alert_id', 'channel', 'status', 'attempts', 'last_error'])
    .where(
      'alert_id',
      'in',
      alerts.map((a) => a.id),
    )
    .orderBy('id')
    .execute();
  return alerts.map((alert) => ({
    ...alert,
    deliveries: deliveries
      .filter((d) => d.alert_id === alert.id)
      .map(({ channel, status, attempts, last_error }) => ({ channel, status, attempts, last_error })),
  }));
}

export async function getMeta(store: Store, key: string): Promise<string | undefined> {
  return (await store.db.selectFrom('meta').select('value').where('key', '=', key).executeTakeFirst())?.value;
}

/** Sets a fact, or removes it with `undefined`. */
export async function setMeta(store: Store, key: string, value: string | undefined): Promise<void> {
  if (value === undefined) {
    await store.db.deleteFrom('meta').where('key', '=', key).execute();
    return;
  }
  await store.db
    .insertInto('meta')
    .values({ key, value })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
    .execute();
}
