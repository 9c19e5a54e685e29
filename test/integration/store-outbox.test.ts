// The outbox's one claim/settle path on a real database, SQLite and PostgreSQL, for alert
// deliveries and digest batches alike; an alert waiting in a batch shows the batch's delivery when
// alerts are read.
import { beforeEach, expect, it } from 'vitest';
import { alertId, causeKey } from '../../src/core/alert-id.ts';
import type { Plan } from '../../src/core/plan.ts';
import { applyPlan, claimSends, closeDigestBatch, dueSends, listAlerts, openDigestBatches, settleSends, type Send, type Store } from '../../src/store/index.ts';
import { describeStores } from '../helpers/databases.ts';

const T0 = new Date('2026-11-21T18:00:00.000Z');
const at = (seconds: number): Date => new Date(T0.getTime() + seconds * 1000);

/** Two alerts, each to `hook` at once and to `daily`'s digest batch. */
function plan(keys = ['A', 'B']): Plan {
  const alerts = keys.map((key) => ({
    seq: 1,
    alert: {
      id: alertId(causeKey('r', 'events', key, 1)),
      rule: 'r',
      severity: 'info' as const,
      source: 'events' as const,
      entity: key,
      trigger: 'new' as const,
      fired_at: '2026-11-21T18:00:00Z',
      summary: `${key} is new`,
      changes: [],
      current: { event_ticker: key },
    },
  }));
  return {
    source: 'events',
    at: T0.toISOString(),
    snapshots: keys.map((key) => ({ key, seq: 1, text: JSON.stringify({ event_ticker: key }) })),
    memory: [],
    alerts,
    deliveries: alerts.flatMap(({ alert }) => [
      { alertId: alert.id, channel: 'hook', status: 'pending' as const },
      { alertId: alert.id, channel: 'daily', status: 'digest' as const },
    ]),
  };
}

describeStores('the outbox', (db) => {
  let store: Store;
  beforeEach(async () => {
    store = await db().open();
  });

  const statuses = async () =>
    (await listAlerts(store, 10)).map((a) => `${a.entity} ${a.deliveries.map((d) => `${d.channel}:${d.status}/${d.attempts}/${d.last_error ?? '-'}`).join(' ')}`).sort();
  const settle = (send: Send, status: 'pending' | 'delivered' | 'dead', error: string | null, seconds = 4) => ({
    send,
    status,
    nextAttemptAt: status === 'pending' ? at(60).toISOString() : null,
    error,
    deliveredAt: status === 'delivered' ? at(seconds).toISOString() : null,
    durationMs: 5,
  });
  /** A pid that no process has: its claims were left by a process that died. */
  const GONE = 2 ** 22 + 17;

  it('claims, then settles, deliveries and digest batches on one path; a batch alert shows the batch', async () => {
    await applyPlan(store, plan());
    expect(await statuses()).toEqual(['A hook:pending/0/- daily:digest/0/-', 'B hook:pending/0/- daily:digest/0/-']);

    const [batch] = await openDigestBatches(store);
    expect(batch).toMatchObject({ rule: 'r', channel: 'daily', size: 2 });
    await closeDigestBatch(store, batch!, 'DIGEST1', at(1));
    const due = await dueSends(store, at(1));
    expect(due.map((s) => `${s.kind} ${s.channel}`)).toEqual(['delivery hook', 'delivery hook', 'digest daily']);

    // A claim counts the attempt; a second claim of the same reading finds nothing left.
    const claimed = await claimSends(store, due, at(2), process.pid, at(302));
    expect(claimed).toHaveLength(3);
    expect(await claimSends(store, due, at(2), 4243, at(302))).toEqual([]);
    const leases = await db().rows('SELECT claimed_by, claimed_until FROM deliveries WHERE claimed_by IS NOT NULL UNION ALL SELECT claimed_by, claimed_until FROM digests');
    expect(leases).toEqual(Array.from({ length: 3 }, () => ({ claimed_by: process.pid, claimed_until: at(302).toISOString() })));
    // Held by a live process: not due to anyone until its lease ends.
    expect(await dueSends(store, at(3))).toEqual([]);

    await settleSends(store, claimed.map((send) => (send.kind === 'digest' ? settle(send, 'pending', 'SMTP 451') : settle(send, 'delivered', null))));
    expect(await statuses()).toEqual(['A hook:delivered/1/- daily:digest/1/SMTP 451', 'B hook:delivered/1/- daily:digest/1/SMTP 451']);
    expect(await dueSends(store, at(59))).toEqual([]);

    const [retry] = await dueSends(store, at(60));
    const [again] = await claimSends(store, [retry!], at(60), process.pid, at(360));
    await settleSends(store, [settle(again!, 'dead', 'SMTP 550')]);
    expect(await statuses()).toEqual(['A hook:delivered/1/- daily:dead/2/SMTP 550', 'B hook:delivered/1/- daily:dead/2/SMTP 550']);
    expect(await dueSends(store, at(3600))).toEqual([]);
  });

  it('sends a claim whose process died mid-send again, with the same id, once its lease ran out (on SQLite, once the process is gone)', async () => {
    await applyPlan(store, plan(['A']));
    const [first] = await claimSends(store, await dueSends(store, at(1)), at(1), GONE, at(31));
    expect(first).toMatchObject({ kind: 'delivery', attempts: 0 });
    // Another process (or machine) reads the outbox before the lease has run out.
    const other = await db().open();
    const early = await dueSends(other, at(30));
    if (db().kind === 'sqlite') {
      // One machine: the claim's process is known to be gone, so its send is due at once.
      expect(early.map((send) => send.id)).toEqual([first!.id]);
    } else {
      expect(early).toEqual([]);
    }
    const [late] = await dueSends(other, at(31));
    expect(late).toMatchObject({ kind: 'delivery', id: first!.id, attempts: 1, claimedBy: GONE });
    expect(late!.kind === 'delivery' && late!.alert.id).toBe(first!.kind === 'delivery' && first!.alert.id);
    expect(await claimSends(other, [late!], at(31), process.pid, at(61))).toHaveLength(1);
    await settleSends(other, [settle(late!, 'delivered', null, 32)]);
    expect(await statuses()).toEqual(['A hook:delivered/2/- daily:digest/0/-']);
  });

  it('ignores the settlement of a claim taken over after its lease ran out', async () => {
    await applyPlan(store, plan(['A']));
    const [slow] = await claimSends(store, await dueSends(store, at(1)), at(1), process.pid, at(31));
    const other = await db().open();
    const [taken] = await claimSends(other, await dueSends(other, at(31)), at(31), process.pid, at(61));
    await settleSends(other, [settle(taken!, 'delivered', null, 32)]);
    // The first send ends now, failed: its claim is no longer its own, so it records nothing.
    await settleSends(store, [settle(slow!, 'pending', 'HTTP 503')]);
    expect(await statuses()).toEqual(['A hook:delivered/2/- daily:digest/0/-']);
  });

  it('claims each send for one process when several claim the same reading at once', async () => {
    const keys = Array.from({ length: 40 }, (_, i) => `K${i}`);
    await applyPlan(store, plan(keys));
    const stores = [store, await db().open(), await db().open()];
    const readings = await Promise.all(stores.map((s) => dueSends(s, at(1))));
    const claim = (i: number) => claimSends(stores[i]!, readings[i]!, at(1), 5000 + i, at(301));
    // SQLite's connections of one process cannot wait for each other (its calls block the thread),
    // so there the processes' claims come one after another, as its write lock orders them anyway.
    const claims = db().kind === 'postgres' ? await Promise.all(stores.map((_, i) => claim(i))) : [await claim(0), await claim(1), await claim(2)];
    const claimedIds = claims.flat().map((send) => send.id);
    expect(claimedIds).toHaveLength(40);
    expect(new Set(claimedIds).size).toBe(40);
    expect(await db().rows('SELECT CAST(count(*) AS integer) AS n FROM deliveries WHERE attempts <> 1 AND digest_id IS NULL AND status = \'pending\'')).toEqual([{ n: 0 }]);
  });

  it('closes a batch once when two processes close it, leaving the next batch open', async () => {
    await applyPlan(store, plan(['A']));
    const other = await db().open();
    const [seen] = await openDigestBatches(other);
    await closeDigestBatch(store, (await openDigestBatches(store))[0]!, 'DIGEST1', at(1));
    // A new alert opens the next batch; the other process closes the batch it read earlier.
    await applyPlan(store, plan(['B']));
    await closeDigestBatch(other, seen!, 'DIGEST1', at(2));
    expect(await db().rows('SELECT id FROM digests')).toEqual([{ id: 'DIGEST1' }]);
    expect(await openDigestBatches(store)).toMatchObject([{ rule: 'r', channel: 'daily', size: 1 }]);
  });
});
