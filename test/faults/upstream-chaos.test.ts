// Upstream chaos: two runs of the pipeline over the same scripted scenario, on two sandboxes with
// the same seed. One is fault-free; before each poll of the other, a seeded PRNG makes about 10%
// of the request paths answer 500, 429 with Retry-After, time out or return malformed JSON. At
// every point where the chaotic run has caught up, both hold the same alerts (rule, entity, id),
// the same deliveries and the same entity snapshots.
import { afterEach, describe, expect, it } from 'vitest';
import type { Fault, Sandbox } from '../../src/sandbox/index.ts';
import { alertKeys, deliveryKeys, entityState, mulberry32, pick, sample, startRig, type Rig, type Rng } from './harness.ts';

const RULES = `
channels:
  screen: { type: console }
  hook: { type: console }
rules:
  - name: edge-over-10
    source: events
    trigger: { type: crosses, field: edge_pp, above: 10, abs: true, rearm: 2 }
    notify: [screen, hook]
  - name: edge-moves-3
    source: events
    trigger: { type: moves, field: edge_pp, by: 3 }
    notify: [screen]
  - name: new-events
    source: events
    trigger: { type: new }
    notify: [hook]
  - name: kpi-actual
    source: kpis
    trigger: { type: appears, field: actual }
    notify: [screen]
  - name: kpi-near-settled
    source: kpis
    trigger: { type: flips, field: near_settled, to: true }
    notify: [screen, hook]
  - name: kpi-market-moves
    source: kpis
    trigger: { type: moves, field: market_probability, by: 5 }
    notify: [screen]
  - name: trust-drop
    source: reports
    trigger: { type: drops, field: trust_label }
    filter: { eligibility_status: closed }
    notify: [screen, hook]
  - name: report-new
    source: reports
    trigger: { type: new }
    filter: { eligibility_status: closed }
    notify: [hook]
`;

const SEED = 7;
const LABELS = [
  { label: 'Strong', score: 90 },
  { label: 'Good', score: 72 },
  { label: 'Caution', score: 55 },
  { label: 'High Risk', score: 35 },
];

let rigs: Rig[] = [];
afterEach(async () => {
  await Promise.all(rigs.map((r) => r.close()));
  rigs = [];
});

/**
 * The scenario's cast, chosen once: `watched` events are closed (so their event rows never move
 * and only their reports change), `movers` are open far into the future and moved by the script.
 */
interface Cast {
  watched: string[];
  movers: string[];
  kpis: string[];
}

function setUp(sandboxes: Sandbox[], rng: Rng): Cast {
  const tickers = sandboxes[0]!.world.eventTickers();
  const chosen = sample(rng, tickers, 45);
  const cast: Cast = { watched: chosen.slice(0, 15), movers: chosen.slice(15), kpis: sandboxes[0]!.world.kpiIds() };
  for (const s of sandboxes) {
    cast.watched.forEach((t, i) => {
      s.world.updateEvent(t, { eligibility_status: 'closed' });
      // A few reports do not exist yet: their first appearance is `new`.
      s.world.setTrust(t, i < 4 ? null : LABELS[i % 2]!);
    });
    for (const t of cast.movers) s.world.updateEvent(t, { close_time: '2031-01-01T00:00:00Z' });
  }
  return cast;
}

type Action = (s: Sandbox) => void;

/** One phase's changes, each entity at most once (`touched` spans a catch-up window). */
function phaseActions(rng: Rng, cast: Cast, touched: Set<string>): Action[] {
  const actions: Action[] = [];
  const fresh = (items: string[], count: number) => {
    const picked = sample(rng, items.filter((x) => !touched.has(x)), count);
    for (const x of picked) touched.add(x);
    return picked;
  };
  for (const t of fresh(cast.movers, 5)) {
    const edge = Math.round((rng() * 30 - 15) * 10) / 10;
    actions.push((s) => s.world.updateEvent(t, { edge_pp: edge }));
  }
  for (const t of fresh(cast.watched, 2)) {
    const trust = pick(rng, LABELS);
    actions.push((s) => s.world.setTrust(t, trust));
  }
  for (const id of fresh(cast.kpis, 4)) {
    const r = rng();
    const value = Math.round(rng() * 1000);
    const probability = Math.round(rng() * 100);
    if (r < 0.3) actions.push((s) => s.world.landActual(id, value));
    else if (r < 0.6) actions.push((s) => s.world.updateKpi(id, { near_settled: r < 0.5 }));
    else actions.push((s) => s.world.updateKpi(id, { market_probability: probability }));
  }
  if (rng() < 0.5) actions.push((s) => void s.world.addEvent());
  return actions;
}

const FAULT_KINDS: Array<(rng: Rng) => Omit<Fault, 'path'>> = [
  (rng) => ({ status: 500, count: 1 + Math.floor(rng() * 3) }),
  (rng) => ({ status: 503, count: 1 + Math.floor(rng() * 3) }),
  (rng) => ({ status: 429, headers: { 'retry-after': '1' }, count: 1 + Math.floor(rng() * 2) }),
  () => ({ delayMs: 400, count: 1 }),
  () => ({ status: 200, body: '{"data": [{"event_ticker": ', count: 1 }),
];

/** Seeded random faults on about 10% of the paths the next poll requests. */
function injectChaos(rng: Rng, sandbox: Sandbox, cast: Cast, rate: number): number {
  sandbox.clearFaults();
  const paths = [
    '/v1/predictions/events',
    '/v1/predictions/kpi-events',
    ...cast.watched.map((t) => `/v1/predictions/reports/${sandbox.world.eventVenue(t)}/${sandbox.world.eventKey(t)}/trust`),
    ...cast.kpis.map((id) => `/v1/predictions/kpi-events/${id}`),
  ];
  let injected = 0;
  for (const path of paths) {
    if (rng() >= rate) continue;
    sandbox.inject({ path, ...pick(rng, FAULT_KINDS)(rng) });
    injected++;
  }
  return injected;
}

describe('upstream chaos', () => {
  it('stores the same alerts as a fault-free run when 10% of requests fail', { timeout: 90_000 }, async () => {
    const rigOptions = { rules: RULES, sandbox: { seed: SEED, events: 300, kpis: 60 }, reportsBudget: 200 };
    const reference = await startRig(rigOptions);
    rigs.push(reference);
    const chaos = await startRig({ ...rigOptions, client: { retries: 2, timeoutMs: 200, backoffBaseMs: 5, maxBackoffMs: 40 } });
    rigs.push(chaos);
    const script = mulberry32(SEED * 101);
    const faults = mulberry32(SEED * 977);
    const cast = setUp([reference.sandbox, chaos.sandbox], script);

    let injected = 0;
    let failedPolls = 0;
    const failedSources = new Set<string>();
    const chaoticPoll = async () => {
      injected += injectChaos(faults, chaos.sandbox, cast, 0.1);
      const report = await chaos.poll();
      if (report.failures.length > 0) failedPolls++;
      for (const f of report.failures) failedSources.add(f.source);
      return report;
    };
    const catchUp = async () => {
      for (let attempt = 0; attempt < 15; attempt++) {
        if ((await chaoticPoll()).failures.length === 0) return;
      }
      throw new Error('the chaotic run did not catch up in 15 polls');
    };
    const expectEqual = (phase: number) => {
      expect(alertKeys(chaos.sql), `alerts after phase ${phase}`).toEqual(alertKeys(reference.sql));
      expect(deliveryKeys(chaos.sql), `deliveries after phase ${phase}`).toEqual(deliveryKeys(reference.sql));
      expect(entityState(chaos.sql), `entities after phase ${phase}`).toEqual(entityState(reference.sql));
    };

    // Baseline, then phases. `advance` phases move the clock (the world moves at random, the same
    // in both sandboxes) and the chaotic run catches up before the next; `lag` phases only change
    // entities through hooks, each at most once per window, and the chaotic run polls once each,
    // failing or not, catching up only when the window ends.
    expect((await reference.poll()).failures).toEqual([]);
    await catchUp();
    expectEqual(0);
    const phases = ['advance', 'lag', 'lag', 'lag', 'advance', 'advance', 'lag', 'lag', 'advance', 'lag', 'lag', 'lag', 'advance'] as const;
    let touched = new Set<string>();
    for (const [i, kind] of phases.entries()) {
      const actions = phaseActions(script, cast, touched);
      const minutes = kind === 'advance' ? 2 + Math.floor(script() * 4) : 0;
      for (const s of [reference.sandbox, chaos.sandbox]) {
        s.advance(minutes);
        for (const act of actions) act(s);
      }
      expect((await reference.poll()).failures).toEqual([]);
      const windowEnds = phases[i + 1] !== 'lag';
      if (kind === 'lag' && !windowEnds) {
        await chaoticPoll();
        continue;
      }
      await catchUp();
      expectEqual(i + 1);
      touched = new Set();
    }

    const stored = alertKeys(reference.sql);
    const rules = new Set(stored.map((k) => k.split(' ')[0]));
    expect(stored.length).toBeGreaterThan(40);
    expect(rules.size).toBeGreaterThanOrEqual(6);
    expect(injected).toBeGreaterThan(30);
    expect(failedPolls).toBeGreaterThan(3);
    expect(failedSources.size).toBeGreaterThanOrEqual(2);
    expect(new Set(stored.map((k) => k.split(' ')[2])).size).toBe(stored.length);
  });
});
