// The outbox's one claim/settle path on a real SQLite file, for alert deliveries and digest
// batches alike; an alert waiting in a batch shows the batch's delivery when alerts are read.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { alertId, causeKey } from '../../src/core/alert-id.ts';
import type { Plan } from '../../src/core/plan.ts';
import { applyPlan, claimSends, closeDigestBatch, dueSends, listAlerts, openDigestBatches, openStore, settleSends, type Send, type Store } from '../../src/store/index.ts';
import { tempDir } from '../helpers/files.ts';

const T0 = new Date('2026-11-21T18:00:00.000Z');
const at = (seconds: number): Date => new Date(T0.getTime() + seconds * 1000);
let dir: string;
let store: Store;

beforeEach(async () => {
  dir = tempDir('edgewatch-outbox-');
  store = await openStore(path.join(dir, 'edgewatch.db'));
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Two alerts, each to `hook` at once and to `daily`'s digest batch. */
function plan(): Plan {
  const keys = ['A', 'B'];
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

const statuses = async () =>
  (await listAlerts(store, 10)).map((a) => `${a.entity} ${a.deliveries.map((d) => `${d.channel}:${d.status}/${d.attempts}/${d.last_error ?? '-'}`).join(' ')}`).sort();

it('claims, then settles, deliveries and digest batches on one path; a batch alert shows the batch', async () => {
  await applyPlan(store, plan());
  expect(await statuses()).toEqual(['A hook:pending/0/- daily:digest/0/-', 'B hook:pending/0/- daily:digest/0/-']);

  const [batch] = await openDigestBatches(store);
  expect(batch).toMatchObject({ rule: 'r', channel: 'daily', size: 2 });
  await closeDigestBatch(store, batch!, 'DIGEST1', at(1));
  const due = await dueSends(store, at(1));
  expect(due.map((s) => `${s.kind} ${s.channel}`)).toEqual(['delivery hook', 'delivery hook', 'digest daily']);

  // A claim counts the attempt; a second claim of the same reading finds nothing left.
  const claimed = await claimSends(store, due, at(2), 4242, at(302));
  expect(claimed).toHaveLength(3);
  expect(await claimSends(store, due, at(2), 4243, at(302))).toEqual([]);
  expect((await dueSends(store, at(3))).map((s) => s.claimedBy)).toEqual([4242, 4242, 4242]);

  const settle = (send: Send, status: 'pending' | 'delivered' | 'dead', error: string | null) => ({
    send,
    status,
    nextAttemptAt: status === 'pending' ? at(60).toISOString() : null,
    error,
    deliveredAt: status === 'delivered' ? at(4).toISOString() : null,
    durationMs: 5,
  });
  await settleSends(store, claimed.map((send) => (send.kind === 'digest' ? settle(send, 'pending', 'SMTP 451') : settle(send, 'delivered', null))));
  expect(await statuses()).toEqual(['A hook:delivered/1/- daily:digest/1/SMTP 451', 'B hook:delivered/1/- daily:digest/1/SMTP 451']);
  expect(await dueSends(store, at(59))).toEqual([]);

  const [retry] = await dueSends(store, at(60));
  const [again] = await claimSends(store, [retry!], at(60), 4242, at(360));
  await settleSends(store, [settle(again!, 'dead', 'SMTP 550')]);
  expect(await statuses()).toEqual(['A hook:delivered/1/- daily:dead/2/SMTP 550', 'B hook:delivered/1/- daily:dead/2/SMTP 550']);
  expect(await dueSends(store, at(3600))).toEqual([]);
});
