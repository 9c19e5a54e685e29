// The outbox: alert deliveries and closed digest batches, two tables with one lifecycle (pending,
// then delivered or dead), read, claimed and settled by one path. A send is claimed by counting
// its attempt before it goes, with a lease (claimed_by, claimed_until), so two processes never send
// it both, and a crash in between leaves it pending: sent again, with the same id, once its lease
// has run out (on SQLite, whose processes share one machine, at once when its process is gone).
import { sql, type ExpressionBuilder, type Kysely } from 'kysely';
import type { Alert, Change, MessageRef, Notice, Snapshot, SourceName } from '../core/types.ts';
import { chunked, compiledOnce, inWriteTransaction, onPostgres } from './batch.ts';
import { describeStore, queryBuilder, type Store } from './connection.ts';
import type { AlertsTable, Database } from './schema.ts';

interface SendState {
  channel: string;
  attempts: number;
  /** The pid of the process sending it now; null when no send is in flight. */
  claimedBy: number | null;
  /** Until when that process holds it. */
  claimedUntil: string | null;
  nextAttemptAt: string;
}

/** The alert's own delivery to the channel of a resolved notice: the notice goes once it was delivered. */
export interface AlertDelivery {
  status: string;
  ref: MessageRef | null;
}

/**
 * What the outbox may send: one alert's delivery to a channel (with the Slack message of its
 * thread, for generation runs), a closed digest batch, or a notice (an alert resolved, a source's
 * health).
 */
export type Send = SendState &
  (
    | { kind: 'delivery'; id: number; alert: Alert; threadRef?: MessageRef }
    | { kind: 'digest'; id: string; rule: string; createdAt: string }
    | { kind: 'notice'; id: string; notice: Notice; alertDelivery?: AlertDelivery }
  );

/** How a send ended: `pending` again (a retry at `nextAttemptAt`), delivered or dead. */
export interface Settlement {
  send: Send;
  status: 'pending' | 'delivered' | 'dead';
  /** Where the message is (Slack), kept with the delivery to update it or reply to it later. */
  ref?: MessageRef;
  nextAttemptAt: string | null;
  error: string | null;
  deliveredAt: string | null;
  durationMs: number;
}

/** An alert as stored, with its snapshot's text as `current` (see withCurrent). */
type AlertRow = Pick<AlertsTable, 'id' | 'rule' | 'severity' | 'source' | 'entity' | 'trigger' | 'fired_at' | 'summary' | 'changes' | 'explanation' | 'explained_at'> & {
  current: string | null;
};

function rowToAlert(row: AlertRow): Alert {
  const alert: Alert = {
    id: row.id,
    rule: row.rule,
    severity: row.severity as Alert['severity'],
    source: row.source as Alert['source'],
    entity: row.entity,
    trigger: row.trigger as Alert['trigger'],
    fired_at: row.fired_at,
    summary: row.summary,
    changes: JSON.parse(row.changes) as Alert['changes'],
    current: JSON.parse(row.current ?? '{}') as Alert['current'],
  };
  // Asked (or given up): the answer or null; not yet asked: absent.
  if (row.explained_at !== null) alert.explanation = row.explanation === null ? null : (JSON.parse(row.explanation) as Alert['explanation']);
  return alert;
}

/**
 * Alerts `a` with their `current` snapshot: the entity's latest while the alert's snapshot is
 * still the latest, else the superseded one kept in `snapshots`.
 */
function alertsWithCurrent(db: Kysely<Database>) {
  return db
    .selectFrom('alerts as a')
    // The snapshot is stored under the alert's feed (a market-search query's) or its source.
    .leftJoin('entities as cur_e', (join) =>
      join.on((eb) => eb(eb.fn.coalesce('a.feed', 'a.source'), '=', eb.ref('cur_e.source'))).onRef('cur_e.entity_key', '=', 'a.entity').onRef('cur_e.seq', '=', 'a.seq'),
    )
    .leftJoin('snapshots as cur_s', (join) =>
      join.on((eb) => eb(eb.fn.coalesce('a.feed', 'a.source'), '=', eb.ref('cur_s.source'))).onRef('cur_s.entity_key', '=', 'a.entity').onRef('cur_s.seq', '=', 'a.seq'),
    )
    .select(['a.id', 'a.rule', 'a.severity', 'a.source', 'a.entity', 'a.trigger', 'a.fired_at', 'a.summary', 'a.changes', 'a.explanation', 'a.explained_at'])
    .select((eb) => eb.fn.coalesce('cur_e.data', 'cur_s.data').as('current'));
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Due: its time has come and nobody holds it, or its holder's lease has run out (a claim made
 * before leases were recorded ran until its next_attempt_at). On SQLite, whose processes share
 * one machine, a claim whose process is gone is due at once (it died between sending and settling).
 */
function isDue(send: SendState, nowIso: string, sameMachine: boolean): boolean {
  if (send.claimedBy === null) return send.nextAttemptAt <= nowIso;
  if ((send.claimedUntil ?? send.nextAttemptAt) <= nowIso) return true;
  return sameMachine && send.claimedBy !== process.pid && !isAlive(send.claimedBy);
}

type OutboxTable = 'deliveries' | 'digests' | 'notices';

/** The same judgement in SQL, but for the processes gone (claims re-read it under their row locks). */
function dueInSql(nowIso: string) {
  return (eb: ExpressionBuilder<Database, OutboxTable>) =>
    eb.or([
      eb.and([eb('claimed_by', 'is', null), eb('next_attempt_at', '<=', nowIso)]),
      eb(eb.fn.coalesce('claimed_until', 'next_attempt_at'), '<=', nowIso),
    ]);
}

/** The sends due now: deliveries first, then digests, each oldest due first. */
export async function dueSends(store: Store, now: Date): Promise<Send[]> {
  const db = queryBuilder(store);
  const nowIso = now.toISOString();
  const sameMachine = describeStore(store).kind === 'sqlite';
  const deliveries = await alertsWithCurrent(db)
    .innerJoin('deliveries as d', 'd.alert_id', 'a.id')
    .select(['d.id as delivery_id', 'd.channel', 'd.attempts', 'd.claimed_by', 'd.claimed_until', 'd.next_attempt_at'])
    .where('d.status', '=', 'pending')
    .where((eb) => eb.or([eb('d.next_attempt_at', '<=', nowIso), eb('d.claimed_by', 'is not', null)]))
    .orderBy('d.next_attempt_at')
    .orderBy('d.id')
    .execute();
  const digests = await db
    .selectFrom('digests')
    .select(['id', 'rule', 'channel', 'attempts', 'claimed_by', 'claimed_until', 'next_attempt_at', 'created_at'])
    .where('status', '=', 'pending')
    .where((eb) => eb.or([eb('next_attempt_at', '<=', nowIso), eb('claimed_by', 'is not', null)]))
    .orderBy('next_attempt_at')
    .orderBy('id')
    .execute();
  const threads = await runThreads(db, deliveries.filter((row) => row.source === 'runs'));
  const sends = [
    ...deliveries.map((row): Send => {
      const threadRef = threads.get(`${row.entity}\u0000${row.channel}`);
      return {
        kind: 'delivery',
        id: row.delivery_id,
        channel: row.channel,
        attempts: row.attempts,
        claimedBy: row.claimed_by,
        claimedUntil: row.claimed_until,
        nextAttemptAt: row.next_attempt_at ?? nowIso,
        alert: rowToAlert(row),
        ...(threadRef ? { threadRef } : {}),
      };
    }),
    ...digests.map((row): Send => ({
      kind: 'digest',
      id: row.id,
      channel: row.channel,
      attempts: row.attempts,
      claimedBy: row.claimed_by,
      claimedUntil: row.claimed_until,
      nextAttemptAt: row.next_attempt_at ?? nowIso,
      rule: row.rule,
      createdAt: row.created_at,
    })),
    ...(await dueNotices(db, nowIso)),
  ];
  return sends.filter((send) => isDue(send, nowIso, sameMachine));
}

function parseRef(text: string | null): MessageRef | null {
  return text === null ? null : (JSON.parse(text) as MessageRef);
}

/**
 * The Slack message of each generation run's thread, by run and channel: the first of its notices
 * posted to that channel. Later notices of the run update it and reply in its thread.
 */
async function runThreads(db: Kysely<Database>, rows: ReadonlyArray<{ entity: string; channel: string }>): Promise<Map<string, MessageRef>> {
  const threads = new Map<string, MessageRef>();
  for (const slice of chunked([...new Set(rows.map((row) => row.entity))])) {
    const posted = await db
      .selectFrom('deliveries as d')
      .innerJoin('alerts as a', 'a.id', 'd.alert_id')
      .select(['a.entity', 'd.channel', 'd.message_ref'])
      .where('a.source', '=', 'runs')
      .where('a.entity', 'in', slice)
      .where('d.message_ref', 'is not', null)
      .orderBy('d.id')
      .execute();
    for (const row of posted) {
      const key = `${row.entity}\u0000${row.channel}`;
      if (!threads.has(key)) threads.set(key, parseRef(row.message_ref)!);
    }
  }
  return threads;
}

/** The notices due, each with what its message needs (a resolved one: the alert, its resolution, and the alert's delivery to that channel). */
async function dueNotices(db: Kysely<Database>, nowIso: string): Promise<Send[]> {
  const rows = await db
    .selectFrom('notices')
    .select(['id', 'notice_id', 'kind', 'alert_id', 'channel', 'body', 'attempts', 'claimed_by', 'claimed_until', 'next_attempt_at'])
    .where('status', '=', 'pending')
    .where((eb) => eb.or([eb('next_attempt_at', '<=', nowIso), eb('claimed_by', 'is not', null)]))
    .orderBy('next_attempt_at')
    .orderBy('id')
    .execute();
  if (rows.length === 0) return [];
  const alertIds = [...new Set(rows.flatMap((row) => (row.alert_id === null ? [] : [row.alert_id])))];
  const alerts = new Map<string, Alert>();
  const resolutions = new Map<string, { resolved_at: string; summary: string; changes: string; current: string | null }>();
  const ownDeliveries = new Map<string, AlertDelivery>();
  for (const slice of chunked(alertIds)) {
    for (const row of await alertsWithCurrent(db).where('a.id', 'in', slice).execute()) alerts.set(row.id, rowToAlert(row));
    const resolved = await db
      .selectFrom('resolutions as r')
      .innerJoin('alerts as a', 'a.id', 'r.alert_id')
      .leftJoin('entities as e', (join) => join.onRef('e.source', '=', 'a.source').onRef('e.entity_key', '=', 'a.entity').onRef('e.seq', '=', 'r.seq'))
      .leftJoin('snapshots as s', (join) => join.onRef('s.source', '=', 'a.source').onRef('s.entity_key', '=', 'a.entity').onRef('s.seq', '=', 'r.seq'))
      .select(['r.alert_id', 'r.resolved_at', 'r.summary', 'r.changes'])
      .select((eb) => eb.fn.coalesce('e.data', 's.data').as('current'))
      .where('r.alert_id', 'in', slice)
      .execute();
    for (const row of resolved) resolutions.set(row.alert_id, row);
    const own = await db.selectFrom('deliveries').select(['alert_id', 'channel', 'status', 'message_ref']).where('alert_id', 'in', slice).execute();
    for (const row of own) ownDeliveries.set(`${row.alert_id}\u0000${row.channel}`, { status: row.status, ref: parseRef(row.message_ref) });
  }
  const sends: Send[] = [];
  for (const row of rows) {
    const state: SendState = { channel: row.channel, attempts: row.attempts, claimedBy: row.claimed_by, claimedUntil: row.claimed_until, nextAttemptAt: row.next_attempt_at ?? nowIso };
    if (row.kind === 'health') {
      const body = JSON.parse(row.body) as { source: SourceName; status: 'degraded' | 'recovered'; error: string | null; at: string };
      sends.push({ ...state, kind: 'notice', id: row.id, notice: { kind: 'health', id: row.notice_id, ...body } });
      continue;
    }
    const alert = row.alert_id === null ? undefined : alerts.get(row.alert_id);
    const resolution = row.alert_id === null ? undefined : resolutions.get(row.alert_id);
    if (!alert || !resolution) continue;
    const notice: Notice = {
      kind: 'resolved',
      id: row.notice_id,
      alert,
      resolved_at: resolution.resolved_at,
      summary: resolution.summary,
      changes: JSON.parse(resolution.changes) as Change[],
      current: JSON.parse(resolution.current ?? '{}') as Snapshot,
    };
    const alertDelivery = ownDeliveries.get(`${alert.id}\u0000${row.channel}`);
    sends.push({ ...state, kind: 'notice', id: row.id, notice, ...(alertDelivery ? { alertDelivery } : {}) });
  }
  return sends;
}

/** One send claimed: its attempt counted, held by `owner` until `leaseUntil`; no row when another process moved it. */
function claimStatement(table: OutboxTable) {
  return compiledOnce<[id: number | string, attempts: number, at: string, leaseUntil: string, owner: number], { id: number | string }>((db, arg) =>
    db
      .updateTable(table)
      .set((eb) => ({ attempts: eb('attempts', '+', sql.lit(1)), last_attempt_at: arg<string>(2), claimed_until: arg<string>(3), claimed_by: arg<number>(4) }))
      .where('id', '=', arg<never>(0))
      .where('attempts', '=', arg<number>(1))
      .where('status', '=', sql.lit('pending'))
      .returning('id'),
  );
}

/**
 * One send settled: its outcome recorded and its claim released; unless it was claimed again
 * since (its lease ran out mid-send and another process took it), as the attempt count says.
 */
function settleStatement(table: OutboxTable) {
  return compiledOnce<
    [id: number | string, status: string, nextAttemptAt: string | null, error: string | null, deliveredAt: string | null, durationMs: number, attempts: number],
    never
  >((db, arg) =>
    db
      .updateTable(table)
      .set({
        status: arg<string>(1),
        next_attempt_at: arg<string | null>(2),
        last_error: arg<string | null>(3),
        delivered_at: arg<string | null>(4),
        duration_ms: arg<number>(5),
        claimed_by: sql.lit(null),
        claimed_until: sql.lit(null),
      })
      .where('id', '=', arg<never>(0))
      .where('attempts', '=', arg<number>(6)),
  );
}

const STATEMENTS = {
  delivery: { claim: claimStatement('deliveries'), settle: settleStatement('deliveries') },
  digest: { claim: claimStatement('digests'), settle: settleStatement('digests') },
  notice: { claim: claimStatement('notices'), settle: settleStatement('notices') },
};

/** Where a delivered Slack message is, kept with its delivery. */
const keepMessageRef = compiledOnce<[id: number, ref: string], never>((db, arg) =>
  db.updateTable('deliveries').set({ message_ref: arg<string>(1) }).where('id', '=', arg<number>(0)),
);

/**
 * Claims sends for `owner` (a pid) and counts their attempt, several in one transaction. A send
 * another process claimed since it was read (its attempt count moved) is left to it. The claim
 * holds off other processes until `leaseUntil`. Returns the sends claimed, each with the attempts
 * it had before this one.
 */
export async function claimSends(store: Store, sends: readonly Send[], now: Date, owner: number, leaseUntil: Date): Promise<Send[]> {
  const claim = async (db: Kysely<Database>, send: Send): Promise<boolean> =>
    (await STATEMENTS[send.kind].claim(db, send.id, send.attempts, now.toISOString(), leaseUntil.toISOString(), owner)).rows.length === 1;
  const db = queryBuilder(store);
  if (onPostgres(db)) return claimLocked(db, sends, now, claim);
  const [only] = sends;
  if (sends.length === 1 && only) return (await claim(db, only)) ? [only] : [];
  return inWriteTransaction(db, async (trx) => {
    const claimed: Send[] = [];
    for (const send of sends) if (await claim(trx, send)) claimed.push(send);
    return claimed;
  });
}

/**
 * PostgreSQL, where processes claim side by side: the rows still due are locked first, skipping
 * those another process is locking, so that each process claims what no other is claiming without
 * waiting for it; then claimed as on SQLite.
 */
async function claimLocked(db: Kysely<Database>, sends: readonly Send[], now: Date, claim: (trx: Kysely<Database>, send: Send) => Promise<boolean>): Promise<Send[]> {
  return inWriteTransaction(db, async (trx) => {
    const locked = new Set<number | string>();
    for (const [kind, table] of [['delivery', 'deliveries'], ['digest', 'digests'], ['notice', 'notices']] as const) {
      const ids = sends.filter((send) => send.kind === kind).map((send) => send.id);
      if (ids.length === 0) continue;
      const rows = await trx
        .selectFrom(table)
        .select('id')
        .where('id', 'in', ids as never[])
        .where('status', '=', 'pending')
        .where(dueInSql(now.toISOString()))
        .forUpdate()
        .skipLocked()
        .execute();
      for (const row of rows) locked.add(`${kind} ${row.id}`);
    }
    const claimed: Send[] = [];
    for (const send of sends) if (locked.has(`${send.kind} ${send.id}`) && (await claim(trx, send))) claimed.push(send);
    return claimed;
  });
}

/** Records how claimed sends ended, and releases their claims (several in one transaction). */
export async function settleSends(store: Store, settlements: readonly Settlement[]): Promise<void> {
  const settle = async (db: Kysely<Database>, { send, status, nextAttemptAt, error, deliveredAt, durationMs, ref }: Settlement): Promise<void> => {
    await STATEMENTS[send.kind].settle(db, send.id, status, nextAttemptAt, error, deliveredAt, durationMs, send.attempts + 1);
    if (ref && send.kind === 'delivery') await keepMessageRef(db, send.id, JSON.stringify(ref));
  };
  const [only] = settlements;
  if (settlements.length === 1 && only && !only.ref) return settle(queryBuilder(store), only);
  await inWriteTransaction(queryBuilder(store), async (trx) => {
    for (const settlement of settlements) await settle(trx, settlement);
  });
}

/** The alerts of a digest batch, oldest first. */
export async function digestAlerts(store: Store, digestId: string): Promise<Alert[]> {
  const rows = await alertsWithCurrent(queryBuilder(store))
    .innerJoin('deliveries as d', 'd.alert_id', 'a.id')
    .where('d.digest_id', '=', digestId)
    .orderBy('a.fired_at')
    .orderBy('a.id')
    .execute();
  return rows.map(rowToAlert);
}

/** Deliveries, digests and notices waiting to be sent (new or to be retried). */
export async function outboxDepth(store: Store): Promise<number> {
  const db = queryBuilder(store);
  const count = async (table: OutboxTable): Promise<number> =>
    Number((await db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).where('status', '=', 'pending').executeTakeFirstOrThrow()).n);
  return (await count('deliveries')) + (await count('digests')) + (await count('notices'));
}

/** An alert delivery not attempted yet (waiting to be sent or in an open digest batch), which a silence may still mute. */
export interface UnsentDelivery {
  id: number;
  alert: Pick<Alert, 'rule' | 'entity' | 'source' | 'fired_at'>;
}

export async function unsentDeliveries(store: Store): Promise<UnsentDelivery[]> {
  const rows = await queryBuilder(store)
    .selectFrom('deliveries as d')
    .innerJoin('alerts as a', 'a.id', 'd.alert_id')
    .select(['d.id', 'a.rule', 'a.entity', 'a.source', 'a.fired_at'])
    .where('d.attempts', '=', 0)
    .where((eb) => eb.or([eb('d.status', '=', 'pending'), eb.and([eb('d.status', '=', 'digest'), eb('d.digest_id', 'is', null)])]))
    .execute();
  return rows.map((row) => ({ id: row.id, alert: { rule: row.rule, entity: row.entity, source: row.source as SourceName, fired_at: row.fired_at } }));
}

/** Marks deliveries `silenced`: stored, never sent. Only those still unsent. */
export async function markSilenced(store: Store, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await inWriteTransaction(queryBuilder(store), async (trx) => {
    for (const slice of chunked(ids)) {
      await trx
        .updateTable('deliveries')
        .set({ status: 'silenced', next_attempt_at: null })
        .where('id', 'in', slice)
        .where('attempts', '=', 0)
        .where('status', 'in', ['pending', 'digest'])
        .where('digest_id', 'is', null)
        .execute();
    }
  });
}

/** An open batch: alerts of one rule waiting, for one channel, for their digest's time. */
export interface OpenBatch {
  rule: string;
  channel: string;
  /** When its first alert came. */
  openedAt: string;
  /** Its first delivery, from which the digest's id is derived. */
  firstId: number;
  size: number;
}

/** The open digest batches, oldest first. */
export async function openDigestBatches(store: Store): Promise<OpenBatch[]> {
  const rows = await queryBuilder(store)
    .selectFrom('deliveries as d')
    .innerJoin('alerts as a', 'a.id', 'd.alert_id')
    .select((eb) => [
      'a.rule',
      'd.channel',
      eb.fn.min('d.created_at').as('opened_at'),
      eb.fn.min('d.id').as('first_id'),
      eb.fn.countAll<number>().as('size'),
    ])
    .where('d.status', '=', 'digest')
    .where('d.digest_id', 'is', null)
    .groupBy(['a.rule', 'd.channel'])
    .orderBy('opened_at')
    .execute();
  return rows.map((row) => ({ rule: row.rule, channel: row.channel, openedAt: row.opened_at, firstId: Number(row.first_id), size: Number(row.size) }));
}

/**
 * Closes a batch: stored as a digest `id`, pending from `now`, holding the batch's alerts.
 * Idempotent: a batch another process closed meanwhile (its first delivery is in a digest) is left
 * as it is, rather than the next batch's alerts taken into a digest already sent. (PostgreSQL locks
 * that first delivery: a process closing the batch at the same time waits, then finds it closed.)
 */
export async function closeDigestBatch(store: Store, batch: Pick<OpenBatch, 'rule' | 'channel' | 'openedAt' | 'firstId'>, id: string, now: Date): Promise<void> {
  const nowIso = now.toISOString();
  await inWriteTransaction(queryBuilder(store), async (trx) => {
    const open = await trx
      .selectFrom('deliveries')
      .select('id')
      .where('id', '=', batch.firstId)
      .where('digest_id', 'is', null)
      .$if(onPostgres(trx), (query) => query.forUpdate())
      .executeTakeFirst();
    if (!open) return;
    await trx
      .insertInto('digests')
      .values({ id, rule: batch.rule, channel: batch.channel, status: 'pending', opened_at: batch.openedAt, created_at: nowIso, next_attempt_at: nowIso })
      .onConflict((oc) => oc.doNothing())
      .execute();
    await trx
      .updateTable('deliveries')
      .set({ digest_id: id })
      .where('status', '=', 'digest')
      .where('digest_id', 'is', null)
      .where('channel', '=', batch.channel)
      .where('alert_id', 'in', (eb) => eb.selectFrom('alerts').select('alerts.id').where('alerts.rule', '=', batch.rule))
      .execute();
  });
}
