// applyPlan on a real database, SQLite and PostgreSQL: one transaction for a page's snapshots, rule
// memory, alerts, deliveries and what its source learned; exactly once by the alert's id.
import { beforeEach, expect, it } from 'vitest';
import { alertId, causeKey } from '../../src/core/alert-id.ts';
import type { Plan } from '../../src/core/plan.ts';
import type { Alert } from '../../src/core/types.ts';
import { applyPlan, insertRun, loadPlanInputs, type Store } from '../../src/store/index.ts';
import { describeStores } from '../helpers/databases.ts';

const AT = '2026-11-21T18:00:03.250Z';

const text = (edge: number): string => JSON.stringify({ event_ticker: 'A', edge_pp: edge });

function alertOf(seq: number): Alert {
  return {
    id: alertId(causeKey('edge', 'events', 'A', seq)),
    rule: 'edge',
    severity: 'warning',
    source: 'events',
    entity: 'A',
    trigger: 'crosses',
    fired_at: '2026-11-21T18:00:03Z',
    summary: 'A crossed',
    changes: [{ field: 'edge_pp', from: 9, to: 12 }],
    current: JSON.parse(text(12)) as Alert['current'],
  };
}

function emptyPlan(at = AT): Plan {
  return { source: 'events', at, snapshots: [], memory: [], alerts: [], deliveries: [] };
}

/** The page that moves A from 9 (seq 1) to 12 (seq 2) and fires `edge` to a channel and a digest. */
function firingPlan(): Plan {
  const alert = alertOf(2);
  return {
    ...emptyPlan(),
    snapshots: [{ key: 'A', seq: 2, text: text(12) }],
    memory: [{ rule: 'edge', key: 'A', state: { armed: false, lastFiredAt: AT } }],
    alerts: [{ alert, seq: 2 }],
    deliveries: [
      { alertId: alert.id, channel: 'hook', status: 'pending' },
      { alertId: alert.id, channel: 'daily', status: 'digest' },
    ],
  };
}

describeStores('applyPlan', (db) => {
  let store: Store;
  beforeEach(async () => {
    store = await db().open();
  });
  const rows = (query: string) => db().rows(query);

  it('writes the snapshots, memory, alerts and deliveries, moving the superseded snapshot to history', async () => {
    await applyPlan(store, { ...emptyPlan('2026-11-21T17:00:00.000Z'), snapshots: [{ key: 'A', seq: 1, text: text(9) }] });
    expect(await applyPlan(store, firingPlan())).toEqual(new Set([alertOf(2).id]));

    expect(await rows('SELECT entity_key, seq, data, first_seen_at, updated_at FROM entities')).toEqual([
      { entity_key: 'A', seq: 2, data: text(12), first_seen_at: '2026-11-21T17:00:00.000Z', updated_at: AT },
    ]);
    expect(await rows('SELECT entity_key, seq, data, stored_at FROM snapshots')).toEqual([{ entity_key: 'A', seq: 1, data: text(9), stored_at: '2026-11-21T17:00:00.000Z' }]);
    expect(await rows('SELECT rule, entity_key, armed, last_fired_at FROM rule_state')).toEqual([{ rule: 'edge', entity_key: 'A', armed: 0, last_fired_at: AT }]);
    expect(await rows('SELECT id, seq, changes FROM alerts')).toEqual([{ id: alertOf(2).id, seq: 2, changes: JSON.stringify(alertOf(2).changes) }]);
    expect(await rows('SELECT channel, status, next_attempt_at, attempts FROM deliveries ORDER BY channel')).toEqual([
      { channel: 'daily', status: 'digest', next_attempt_at: null, attempts: 0 },
      { channel: 'hook', status: 'pending', next_attempt_at: AT, attempts: 0 },
    ]);
    const inputs = await loadPlanInputs(store, 'events', ['A', 'B']);
    expect(inputs.previous).toEqual(new Map([['A', { seq: 2, text: text(12) }]]));
    expect(inputs.memory).toEqual(new Map([['A', new Map([['edge', { armed: false, lastFiredAt: AT }]])]]));
  });

  it('stores an alert once: applying its plan again (a re-poll after a crash) adds no alert or delivery', async () => {
    await applyPlan(store, firingPlan());
    await db().exec("UPDATE deliveries SET status = 'delivered' WHERE channel = 'hook'");
    expect(await applyPlan(store, firingPlan())).toEqual(new Set());
    expect(await rows('SELECT CAST(count(*) AS integer) AS n FROM alerts')).toEqual([{ n: 1 }]);
    expect(await rows('SELECT channel, status FROM deliveries ORDER BY channel')).toEqual([
      { channel: 'daily', status: 'digest' },
      { channel: 'hook', status: 'delivered' },
    ]);
  });

  it('keeps every version of an entity written twice in one page, the last as its latest', async () => {
    await applyPlan(store, {
      ...emptyPlan(),
      snapshots: [
        { key: 'A', seq: 1, text: text(9) },
        { key: 'A', seq: 2, text: text(12) },
      ],
    });
    expect(await rows('SELECT seq, data FROM entities')).toEqual([{ seq: 2, data: text(12) }]);
    expect(await rows('SELECT seq, data FROM snapshots')).toEqual([{ seq: 1, data: text(9) }]);
  });

  it('stores what the source learned in the same transaction, and rolls the whole page back when a write fails', async () => {
    await insertRun(store, { run_id: 'R1', venue: 'venuea', event_key: 'K', status: 'processing', created_at: '2026-11-21T17:00:00.000Z' });
    const remembered = {
      reportChecks: [{ eventTicker: 'A', venue: 'venuea', eventKey: 'A', checkedAt: AT, found: true }],
      runStatuses: [{ runId: 'R1', status: 'completed' }],
    };
    await db().failInserts('deliveries', 'disk I/O error (injected)');
    await expect(applyPlan(store, firingPlan(), remembered)).rejects.toThrow(/injected/);
    for (const table of ['entities', 'rule_state', 'alerts', 'deliveries', 'report_checks']) expect(await rows(`SELECT CAST(count(*) AS integer) AS n FROM ${table}`)).toEqual([{ n: 0 }]);
    expect(await rows('SELECT status FROM runs')).toEqual([{ status: 'processing' }]);

    await db().healInserts('deliveries');
    await applyPlan(store, firingPlan(), remembered);
    expect(await rows('SELECT event_ticker, venue, event_key, last_checked_at, found FROM report_checks')).toEqual([
      { event_ticker: 'A', venue: 'venuea', event_key: 'A', last_checked_at: AT, found: 1 },
    ]);
    expect(await rows('SELECT status, updated_at FROM runs')).toEqual([{ status: 'completed', updated_at: AT }]);
    expect(await rows('SELECT CAST(count(*) AS integer) AS n FROM deliveries')).toEqual([{ n: 2 }]);
  });

  it('writes a page of thousands of rows in slices within the statement limits', async () => {
    const snapshots = Array.from({ length: 12_000 }, (_, i) => ({ key: `K${i}`, seq: 1, text: `{"i":${i}}` }));
    await applyPlan(store, { ...emptyPlan(), snapshots });
    expect(await rows('SELECT CAST(count(*) AS integer) AS n FROM entities')).toEqual([{ n: 12_000 }]);
    expect((await loadPlanInputs(store, 'events', snapshots.map((s) => s.key))).previous.size).toBe(12_000);
  });
});
