// Disk and database faults: the database file locked by another connection (BEGIN EXCLUSIVE) for a
// while, and writes that fail (a trigger aborting every insert, as a full disk would). The cycle
// fails cleanly (each source reports its failure, nothing half-written) and the next one catches
// up: alerts, deliveries and snapshots equal an undisturbed run's over the same scenario.
import SqliteDatabase from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { getSourceState } from '../../src/store/index.ts';
import { alertKeys, deliveryKeys, entityState, startRig, type Rig } from './harness.ts';

const RULES = `
channels:
  screen: { type: console }
  hook: { type: console }
rules:
  - name: edge-over-10
    source: events
    trigger: { type: crosses, field: edge_pp, above: 10, abs: true }
    notify: [screen, hook]
  - name: edge-moves-3
    source: events
    trigger: { type: moves, field: edge_pp, by: 3 }
    notify: [screen]
  - name: new-events
    source: events
    trigger: { type: new }
    notify: [hook]
  - name: kpi-market-moves
    source: kpis
    trigger: { type: moves, field: market_probability, by: 5 }
    notify: [screen]
`;

let rigs: Rig[] = [];
let others: SqliteDatabase.Database[] = [];
afterEach(async () => {
  for (const db of others) if (db.open) db.close();
  others = [];
  await Promise.all(rigs.map((r) => r.close()));
  rigs = [];
});

/** The same scripted change in every sandbox: movers jump across 10 pp, a new event, KPIs move. */
function change(sandboxes: Sandbox[], round: number): void {
  for (const s of sandboxes) {
    s.advance(1);
    const tickers = s.world.eventTickers();
    for (let i = round; i < 200; i += 9) s.world.updateEvent(tickers[i]!, { edge_pp: (i + round) % 2 ? 14 : 3 });
    s.world.addEvent();
    const kpis = s.world.kpiIds();
    for (let i = round; i < kpis.length; i += 5) s.world.updateKpi(kpis[i]!, { market_probability: (i * 7 + round * 13) % 100 });
  }
}

async function pair(busyTimeoutMs: number): Promise<{ reference: Rig; faulty: Rig }> {
  const options = { rules: RULES, sandbox: { seed: 11, events: 400, kpis: 40 } };
  const reference = await startRig(options);
  rigs.push(reference);
  const faulty = await startRig({ ...options, busyTimeoutMs });
  rigs.push(faulty);
  return { reference, faulty };
}

function expectSameState(reference: Rig, faulty: Rig): void {
  expect(alertKeys(faulty.sql)).toEqual(alertKeys(reference.sql));
  expect(deliveryKeys(faulty.sql)).toEqual(deliveryKeys(reference.sql));
  expect(entityState(faulty.sql)).toEqual(entityState(reference.sql));
}

function counts(rig: Rig): Record<string, number> {
  const n = (table: string) => rig.sql.prepare<[], { n: number }>(`SELECT count(*) AS n FROM ${table}`).get()!.n;
  return { entities: n('entities'), snapshots: n('snapshots'), alerts: n('alerts'), deliveries: n('deliveries'), rule_state: n('rule_state') };
}

describe('database faults', () => {
  it('a cycle against a database locked by another connection fails cleanly; the next catches up', { timeout: 30_000 }, async () => {
    const { reference, faulty } = await pair(100);
    for (const rig of [reference, faulty]) expect((await rig.poll()).failures).toEqual([]);

    for (let round = 1; round <= 4; round++) {
      change([reference.sandbox, faulty.sandbox], round);
      expect((await reference.poll()).failures).toEqual([]);
      if (round % 2 === 1) {
        // Another process holds the write lock for the whole cycle.
        const other = new SqliteDatabase(faulty.dbPath);
        others.push(other);
        other.exec('BEGIN EXCLUSIVE');
        const before = counts(faulty);
        const watermark = (await getSourceState(faulty.store, 'events'))?.watermark;
        const report = await faulty.poll();
        expect(report.failures.map((f) => f.source).sort()).toEqual(['events', 'kpis']);
        for (const f of report.failures) expect(f.error).toMatch(/locked|busy/i);
        expect(report.alerts).toEqual([]);
        other.exec('ROLLBACK');
        other.close();
        expect(counts(faulty)).toEqual(before);
        expect((await getSourceState(faulty.store, 'events'))?.watermark).toBe(watermark);
      }
      expect((await faulty.poll()).failures).toEqual([]);
      expectSameState(reference, faulty);
    }
    expect(alertKeys(reference.sql).length).toBeGreaterThan(50);
  });

  it('a cycle whose writes fail (every insert aborted) stores nothing; the next catches up', { timeout: 30_000 }, async () => {
    const { reference, faulty } = await pair(1000);
    for (const rig of [reference, faulty]) expect((await rig.poll()).failures).toEqual([]);
    const failing = [
      // The disk refuses the alert rows: the page with an alert rolls back with its snapshots.
      "CREATE TRIGGER fault BEFORE INSERT ON alerts BEGIN SELECT RAISE(ABORT, 'disk I/O error (injected)'); END",
      // The disk refuses every snapshot.
      "CREATE TRIGGER fault BEFORE INSERT ON snapshots BEGIN SELECT RAISE(ABORT, 'database or disk is full (injected)'); END",
    ];
    for (let round = 1; round <= 4; round++) {
      change([reference.sandbox, faulty.sandbox], round);
      expect((await reference.poll()).failures).toEqual([]);
      const trigger = failing[round % 2];
      if (round <= 2 && trigger !== undefined) {
        faulty.sql.exec(trigger);
        const before = counts(faulty);
        const report = await faulty.poll();
        expect(report.failures.map((f) => f.source)).toContain('events');
        for (const f of report.failures) expect(f.error).toMatch(/injected/);
        faulty.sql.exec('DROP TRIGGER fault');
        // Nothing of the failed pages was kept: no alert, delivery or rule memory without its
        // snapshot, and every superseded snapshot archived.
        const after = counts(faulty);
        expect(after.alerts).toBe(before.alerts);
        expect(after.deliveries).toBe(before.deliveries);
        if (round === 2) expect(after).toEqual(before);
        const orphans = faulty.sql
          .prepare<[], { n: number }>(
            'SELECT count(*) AS n FROM entities e WHERE e.seq > 1 AND NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.source = e.source AND s.entity_key = e.entity_key AND s.seq = e.seq - 1)',
          )
          .get()!.n;
        expect(orphans).toBe(0);
      }
      expect((await faulty.poll()).failures).toEqual([]);
      expectSameState(reference, faulty);
    }
    expect(alertKeys(reference.sql).length).toBeGreaterThan(50);
  });
});
