// An alert's life in the pure core: dwell (start, reset, completion), resolution of crosses (with
// rearm) and overdue, inhibition with and without a source, quiet hours, silences. The planner's
// writes are applied to an in-memory state here, as the store applies them.
import { describe, expect, it } from 'vitest';
import type { OpenAlerts, Plan, RelatedSnapshots, StoredSnapshot, Timer } from '../../src/core/plan.ts';
import type { Alert, RuleState, Silence, Snapshot, SourceName } from '../../src/core/types.ts';
import { globMatches, inhibitedBy, quietUntil, silencedBy, type Quiet, type Rule, type Trigger } from '../../src/rules/index.ts';
import { plan, planTimers } from '../../src/rules/plan.ts';

function rule(name: string, trigger: Trigger, extra: Partial<Rule> = {}): Rule {
  return { name, source: 'events', trigger, filter: [], notify: ['screen'], severity: 'info', file: 'x.yaml', line: 1, ...extra };
}

const T0 = Date.parse('2026-11-21T18:00:00Z');
const minute = (m: number): Date => new Date(T0 + m * 60_000);

/** The store, in memory: what the planner reads, kept as applyPlan keeps it. */
class State {
  previous = new Map<string, StoredSnapshot>();
  memory = new Map<string, Map<string, RuleState>>();
  timers = new Map<string, Map<string, Timer>>();
  open = new Map<string, Map<string, string>>();
  alerts: Array<{ id: string; rule: string; entity: string; at: string; inhibited: boolean; summary: string }> = [];
  resolutions: Array<{ id: string; alertId: string; at: string }> = [];
  private baselined = false;

  constructor(
    readonly rules: Rule[],
    readonly source: SourceName = 'events',
    readonly related = new Map<string, RelatedSnapshots>(),
  ) {}

  apply(p: Plan): void {
    for (const s of p.snapshots) this.previous.set(s.key, { seq: s.seq, text: s.text });
    for (const m of p.memory) this.inner(this.memory, m.key).set(m.rule, m.state);
    for (const c of p.clearedTimers ?? []) this.timers.get(c.key)?.delete(c.rule);
    for (const t of p.timers ?? []) this.inner(this.timers, t.key).set(t.rule, t);
    const known = new Set(this.alerts.map((a) => a.id));
    for (const { alert, inhibitedBy: by } of p.alerts) {
      if (known.has(alert.id)) continue;
      this.alerts.push({ id: alert.id, rule: alert.rule, entity: alert.entity, at: alert.fired_at, inhibited: by !== undefined, summary: alert.summary });
      if (this.rules.find((r) => r.name === alert.rule)?.resolve) this.inner(this.open, alert.entity).set(alert.rule, alert.id);
    }
    for (const r of p.resolutions ?? []) {
      if (this.resolutions.some((x) => x.alertId === r.alertId)) continue;
      this.resolutions.push({ id: r.id, alertId: r.alertId, at: r.resolvedAt });
      for (const byRule of this.open.values()) for (const [name, id] of byRule) if (id === r.alertId) byRule.delete(name);
    }
  }

  private inner<V>(map: Map<string, Map<string, V>>, key: string): Map<string, V> {
    let inner = map.get(key);
    if (!inner) map.set(key, (inner = new Map()));
    return inner;
  }

  /** One poll: a page of these snapshots (none: nothing changed), then the timers due. */
  poll(now: Date, items: Record<string, Snapshot> = {}): void {
    const baseline = !this.baselined;
    this.baselined = true;
    const common = { source: this.source, rules: this.rules, now, open: this.open as Map<string, OpenAlerts>, related: this.related };
    this.apply(plan({ ...common, items: Object.entries(items).map(([key, data]) => ({ key, data })), previous: this.previous, memory: this.memory, timers: this.timers, baseline }));
    if (baseline) return;
    const due = [...this.timers.values()].flatMap((byRule) => [...byRule.values()]).filter((t) => Date.parse(t.dueAt) <= now.getTime());
    this.apply(planTimers({ ...common, due, latest: this.previous, memory: this.memory }));
  }
}

const crosses = (extra: Partial<Extract<Trigger, { type: 'crosses' }>> = {}): Trigger => ({ type: 'crosses', field: 'edge_pp', above: 10, abs: false, rearm: 2, ...extra });

describe('dwell (for)', () => {
  // Each step: [minute, edge_pp or undefined (the entity did not change)]; the first is the baseline.
  const cases: Array<{ name: string; steps: Array<[number, number | undefined]>; fires: number[] }> = [
    { name: 'starts at the crossing and completes at the first poll 15 min later', steps: [[0, 8], [1, 12], [10, undefined], [15, undefined], [16, undefined], [30, undefined]], fires: [16] },
    { name: 'completes on a poll that changed the entity, still beyond', steps: [[0, 8], [1, 12], [17, 13]], fires: [17] },
    { name: 'resets when back within before it completes', steps: [[0, 8], [1, 12], [5, 9], [10, 12], [20, undefined], [25, undefined], [26, undefined]], fires: [25] },
    { name: 'a value beyond but not back within keeps the wait', steps: [[0, 8], [1, 12], [5, 11], [16, undefined]], fires: [16] },
    { name: 'fires again only after re-arming', steps: [[0, 8], [1, 12], [16, undefined], [20, 9], [21, 7], [22, 12], [37, undefined]], fires: [16, 37] },
    { name: 'an entity already beyond at the baseline never starts a dwell', steps: [[0, 12], [20, undefined], [40, 13]], fires: [] },
  ];
  it.each(cases)('$name', ({ steps, fires }) => {
    const state = new State([rule('held', crosses(), { forMs: 15 * 60_000 })]);
    const fired: number[] = [];
    for (const [m, value] of steps) {
      const before = state.alerts.length;
      state.poll(minute(m), value === undefined ? {} : { KXA: { event_ticker: 'KXA', edge_pp: value } });
      if (state.alerts.length > before) fired.push(m);
      expect(state.alerts.length - before).toBeLessThanOrEqual(1);
    }
    expect(fired).toEqual(fires);
    // A completed dwell leaves no timer behind (only one still waiting may be there).
    for (const timer of state.timers.get('KXA')?.values() ?? []) expect(Date.parse(timer.dueAt)).toBeGreaterThan(minute(steps.at(-1)![0]).getTime());
    // fired_at is the poll at which the dwell was complete.
    expect(state.alerts.map((a) => a.at)).toEqual(fires.map((m) => minute(m).toISOString().replace('.000Z', 'Z')));
  });

  it('the alert id derives from the crossing that started the dwell: planned twice, it is one alert', () => {
    const state = new State([rule('held', crosses(), { forMs: 15 * 60_000 })]);
    state.poll(minute(0), { KXA: { edge_pp: 8 } });
    state.poll(minute(1), { KXA: { edge_pp: 12 } });
    const [timer] = [...state.timers.get('KXA')!.values()];
    const again = () => planTimers({ source: 'events', due: [timer!], latest: state.previous, memory: state.memory, rules: state.rules, now: minute(16) });
    expect(again().alerts[0]!.alert.id).toBe(again().alerts[0]!.alert.id);
    expect(planTimers({ source: 'events', due: [timer!], latest: state.previous, memory: state.memory, rules: state.rules, now: minute(18) }).alerts[0]!.alert.id).toBe(
      again().alerts[0]!.alert.id,
    );
  });
});

describe('resolution', () => {
  const cases: Array<{ name: string; rule: Rule; steps: Array<[number, number | undefined]>; fires: number[]; resolves: number[] }> = [
    {
      name: 'crosses resolves when it re-arms (back to 10 - rearm 2), not before',
      rule: rule('edge', crosses(), { resolve: true }),
      steps: [[0, 8], [1, 12], [2, 9], [3, 8], [4, 12], [5, 7.5]],
      fires: [1, 4],
      resolves: [3, 5],
    },
    {
      name: 'crosses without resolve: no resolution',
      rule: rule('edge', crosses()),
      steps: [[0, 8], [1, 12], [3, 8]],
      fires: [1],
      resolves: [],
    },
    {
      name: 'a dwell alert resolves once it re-arms',
      rule: rule('edge', crosses({ rearm: 0 }), { resolve: true, forMs: 5 * 60_000 }),
      steps: [[0, 8], [1, 12], [6, undefined], [7, 10]],
      fires: [6],
      resolves: [7],
    },
  ];
  it.each(cases)('$name', ({ rule: r, steps, fires, resolves }) => {
    const state = new State([r]);
    const fired: number[] = [];
    const resolved: number[] = [];
    for (const [m, value] of steps) {
      const [a, b] = [state.alerts.length, state.resolutions.length];
      state.poll(minute(m), value === undefined ? {} : { KXA: { edge_pp: value } });
      if (state.alerts.length > a) fired.push(m);
      if (state.resolutions.length > b) resolved.push(m);
    }
    expect(fired).toEqual(fires);
    expect(resolved).toEqual(resolves);
    // Each resolution resolves its own alert, with an id of its own.
    state.resolutions.forEach((res, i) => {
      expect(res.alertId).toBe(state.alerts[i]!.id);
      expect(res.id).not.toBe(res.alertId);
    });
  });

  const overdue = (graceMs = 86_400_000): Rule =>
    rule('kpi-late', { type: 'overdue', field: 'actual', due: 'expected_report_date', graceMs }, { source: 'kpis', resolve: true });
  const kpi = (due: string, actual: unknown = null): Snapshot => ({ id: 'K1', expected_report_date: due, actual });

  it.each([
    { name: 'fires once the due date plus grace has passed, at a poll where nothing changed', due: '2026-11-22', steps: [[0, null], [60 * 24, null], [60 * 49, undefined], [60 * 50, undefined]], fires: [60 * 49], resolves: [] },
    { name: 'resolves when the field appears', due: '2026-11-22', steps: [[0, null], [60 * 49, undefined], [60 * 60, { value: 1 }]], fires: [60 * 49], resolves: [60 * 60] },
    { name: 'never fires when the field appears in time', due: '2026-11-22', steps: [[0, null], [60 * 30, { value: 1 }], [60 * 50, undefined]], fires: [], resolves: [] },
    { name: 'a due date already past at the baseline fires nothing', due: '2026-11-01', steps: [[0, null], [60, undefined], [120, null]], fires: [], resolves: [] },
  ] as Array<{ name: string; due: string; steps: Array<[number, unknown]>; fires: number[]; resolves: number[] }>)('overdue: $name', ({ due, steps, fires, resolves }) => {
    const state = new State([overdue()], 'kpis');
    const fired: number[] = [];
    const resolved: number[] = [];
    for (const [m, actual] of steps) {
      const [a, b] = [state.alerts.length, state.resolutions.length];
      state.poll(minute(m), actual === undefined ? {} : { K1: kpi(due, actual) });
      if (state.alerts.length > a) fired.push(m);
      if (state.resolutions.length > b) resolved.push(m);
    }
    expect(fired).toEqual(fires);
    expect(resolved).toEqual(resolves);
  });

  it('overdue fires once per due date: a new due date is a new alert', () => {
    const state = new State([overdue(0)], 'kpis');
    state.poll(minute(0), { K1: kpi('2026-11-22') });
    state.poll(minute(60 * 7), { K1: kpi('2026-11-22') });
    state.poll(minute(60 * 8), {});
    expect(state.alerts).toHaveLength(1);
    state.poll(minute(60 * 9), { K1: kpi('2026-11-23') });
    state.poll(minute(60 * 31), {});
    expect(state.alerts).toHaveLength(2);
    expect(state.alerts[0]!.summary).toContain('still missing past its due date 2026-11-22');
  });
});

describe('inhibition (unless)', () => {
  const base = rule('edge', crosses(), {
    unless: [
      { source: 'reports', filter: [{ field: 'trust_label', conditions: [{ op: 'in', value: ['Avoid', 'High Risk'] }] }] },
      { filter: [{ field: 'confidence_score', conditions: [{ op: 'lt', value: 3 }] }] },
    ],
  });
  const report = (label: string): RelatedSnapshots => new Map([['reports', { key: 'venuea/KXA', data: { event_ticker: 'KXA', trust_label: label } }]]);
  it.each([
    { name: 'no entry holds', current: { confidence_score: 7 }, related: report('Good'), expected: undefined },
    { name: 'an entry without source holds on the own snapshot', current: { confidence_score: 2 }, related: report('Good'), expected: { entry: 1, source: 'events', entity: 'KXA' } },
    { name: 'an entry with source holds on the same event in that source', current: { confidence_score: 7 }, related: report('Avoid'), expected: { entry: 0, source: 'reports', entity: 'venuea/KXA' } },
    { name: 'the first entry that holds is named', current: { confidence_score: 1 }, related: report('High Risk'), expected: { entry: 0, source: 'reports', entity: 'venuea/KXA' } },
    { name: 'a source with no snapshot of the event does not hold', current: { confidence_score: 7 }, related: undefined, expected: undefined },
  ])('$name', ({ current, related, expected }) => {
    expect(inhibitedBy(base, 'KXA', current, related)).toEqual(expected);
  });

  it('an inhibited firing is stored with the entry and its deliveries are inhibited', () => {
    const state = new State([base], 'events', new Map([['KXA', report('Avoid')]]));
    state.poll(minute(0), { KXA: { edge_pp: 8, confidence_score: 7 } });
    const p = plan({ source: 'events', items: [{ key: 'KXA', data: { edge_pp: 12, confidence_score: 7 } }], previous: state.previous, memory: state.memory, rules: [base], now: minute(1), baseline: false, related: state.related });
    expect(p.alerts[0]!.inhibitedBy).toEqual({ entry: 0, source: 'reports', entity: 'venuea/KXA' });
    expect(p.deliveries.map((d) => d.status)).toEqual(['inhibited']);
  });
});

describe('quiet hours', () => {
  const weeknights: Quiet = { from: '22:00', to: '07:00', timezone: 'Europe/London', days: ['mon', 'tue', 'wed', 'thu', 'fri'] };
  const office: Quiet = { from: '09:00', to: '17:00', timezone: 'America/New_York' };
  const earlySunday: Quiet = { from: '00:30', to: '02:30', timezone: 'Europe/London', days: ['sun'] };
  const saturdayNight: Quiet = { from: '22:00', to: '07:00', timezone: 'Europe/London', days: ['sat'] };
  it.each([
    // 2026-11-20 is a Friday; London is on GMT in November.
    { name: 'Friday 23:00 in London: until Saturday 07:00', quiet: weeknights, now: '2026-11-20T23:00:00Z', until: '2026-11-21T07:00:00.000Z' },
    { name: 'Saturday 06:00, the window Friday started: until 07:00', quiet: weeknights, now: '2026-11-21T06:00:00Z', until: '2026-11-21T07:00:00.000Z' },
    { name: 'Saturday 23:00: no window starts on Saturday', quiet: weeknights, now: '2026-11-21T23:00:00Z', until: undefined },
    { name: 'Monday 03:00: the window would have started on Sunday', quiet: weeknights, now: '2026-11-23T03:00:00Z', until: undefined },
    { name: 'Tuesday 07:00 exactly: the window has ended', quiet: weeknights, now: '2026-11-24T07:00:00Z', until: undefined },
    { name: 'Tuesday 21:59: not yet', quiet: weeknights, now: '2026-11-24T21:59:00Z', until: undefined },
    // New York is UTC-5 in November: 09:00-17:00 local is 14:00-22:00 UTC.
    { name: 'New York 10:00 (15:00 UTC): until 17:00 local', quiet: office, now: '2026-11-24T15:00:00Z', until: '2026-11-24T22:00:00.000Z' },
    { name: 'New York 08:00 (13:00 UTC): outside', quiet: office, now: '2026-11-24T13:00:00Z', until: undefined },
    // 2026-03-29: London moves from GMT to BST at 01:00 UTC; 02:30 local is then 01:30 UTC.
    { name: 'DST starts inside the window: it ends at 02:30 BST', quiet: earlySunday, now: '2026-03-29T00:45:00Z', until: '2026-03-29T01:30:00.000Z' },
    // 2026-10-25: back to GMT at 01:00 UTC; Saturday's window ends Sunday 07:00 GMT.
    { name: 'DST ends inside the window: it ends at 07:00 GMT', quiet: saturdayNight, now: '2026-10-24T22:30:00Z', until: '2026-10-25T07:00:00.000Z' },
  ])('$name', ({ quiet, now, until }) => {
    expect(quietUntil(quiet, new Date(now))?.toISOString()).toBe(until);
  });
});

describe('silences', () => {
  const silence = (matchers: Silence['matchers'], starts = '2026-11-21T10:00:00Z', ends = '2026-11-21T12:00:00Z'): Silence => ({
    id: 's1',
    matchers,
    starts_at: starts,
    ends_at: ends,
    comment: null,
    created_by: 'ann',
  });
  const alert: Pick<Alert, 'rule' | 'entity' | 'source' | 'fired_at'> = { rule: 'politics-edge-over-10', entity: 'KXFED-25DEC', source: 'events', fired_at: '2026-11-21T11:00:00Z' };
  it.each([
    { name: 'a glob on the rule', matchers: { rule: 'politics-*' }, muted: true },
    { name: 'rule and entity must both match', matchers: { rule: 'politics-*', entity: 'KXCPI*' }, muted: false },
    { name: 'a source', matchers: { source: 'events' }, muted: true },
    { name: '* alone matches anything', matchers: { entity: '*' }, muted: true },
    { name: 'regex characters are literal', matchers: { entity: 'KXFED.25DEC' }, muted: false },
  ])('$name', ({ matchers, muted }) => {
    expect(silencedBy([silence(matchers)], alert) !== undefined).toBe(muted);
  });
  it('only a silence active when the alert fired mutes it', () => {
    expect(silencedBy([silence({ rule: '*' }, '2026-11-21T11:30:00Z')], alert)).toBeUndefined();
    expect(silencedBy([silence({ rule: '*' }, '2026-11-21T09:00:00Z', '2026-11-21T11:00:00Z')], alert)).toBeUndefined();
    expect(globMatches('a*b*c', 'aXXbYYc')).toBe(true);
  });
});
