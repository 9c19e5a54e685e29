import { describe, expect, it } from 'vitest';
import { alertId, causeKey } from '../../src/core/alert-id.ts';
import type { RuleState, Snapshot, SnapshotItem } from '../../src/core/types.ts';
import type { Rule, Trigger } from '../../src/rules/index.ts';
import type { EntityMemory, StoredSnapshot } from '../../src/core/plan.ts';
import type { PlanInput } from '../../src/rules/plan.ts';
import { plan } from '../../src/rules/plan.ts';

const NOW = new Date('2026-11-21T18:00:03.250Z');
const AT = '2026-11-21T18:00:03.250Z';

function rule(name: string, trigger: Trigger, extra: Partial<Rule> = {}): Rule {
  return { name, source: 'events', trigger, filter: [], notify: ['screen'], severity: 'info', file: 'x.yaml', line: 1, ...extra };
}

const above10 = rule('edge-over-10', { type: 'crosses', field: 'edge_pp', above: 10, abs: false, rearm: 2 });
const newEvents = rule('new-events', { type: 'new' }, { notify: ['screen', 'hook'] });
const digested = rule('daily', { type: 'moves', field: 'edge_pp', by: 1, direction: 'any' }, { notify: ['mail'], digest: { cron: '0 18 * * *' } });

const event = (key: string, edge_pp: number | null): SnapshotItem => ({ key, data: { event_ticker: key, edge_pp } });
const stored = (seq: number, data: Snapshot): StoredSnapshot => ({ seq, text: JSON.stringify(data) });
const memoryOf = (entries: Record<string, Record<string, RuleState>>): Map<string, EntityMemory> =>
  new Map(Object.entries(entries).map(([key, byRule]) => [key, new Map(Object.entries(byRule))]));

function input(partial: Partial<PlanInput>): PlanInput {
  return { source: 'events', items: [], previous: new Map(), memory: new Map(), rules: [above10], now: NOW, baseline: false, ...partial };
}

/** A plan reduced to what a table row compares. */
function outline(input: PlanInput) {
  const p = plan(input);
  return {
    snapshots: p.snapshots.map((s) => `${s.key}#${s.seq}`),
    memory: p.memory.map((m) => `${m.rule} ${m.key} armed=${m.state.armed} fired=${m.state.lastFiredAt ?? '-'}`),
    alerts: p.alerts.map((a) => `${a.alert.rule} ${a.alert.entity}#${a.seq}`),
    deliveries: p.deliveries.map((d) => `${d.channel}:${d.status}`),
  };
}

describe('plan', () => {
  it.each([
    {
      name: 'baseline: every snapshot stored, nothing judged',
      input: input({ baseline: true, rules: [above10, newEvents], items: [event('A', 12), event('B', 3)] }),
      expected: { snapshots: ['A#1', 'B#1'], memory: [], alerts: [], deliveries: [] },
    },
    {
      name: 'an item marked baseline is stored without judging when first seen (a report first checked)',
      input: input({ rules: [newEvents], items: [{ ...event('A', 12), baseline: true }] }),
      expected: { snapshots: ['A#1'], memory: [], alerts: [], deliveries: [] },
    },
    {
      name: 'unchanged snapshot: nothing written',
      input: input({ items: [event('A', 12)], previous: new Map([['A', stored(4, event('A', 12).data)]]) }),
      expected: { snapshots: [], memory: [], alerts: [], deliveries: [] },
    },
    {
      name: 'new entity after the baseline: `new` fires to every channel, `crosses` fires when already beyond',
      input: input({ rules: [newEvents, above10], items: [event('A', 12)] }),
      expected: {
        snapshots: ['A#1'],
        memory: [`new-events A armed=true fired=${AT}`, `edge-over-10 A armed=false fired=${AT}`],
        alerts: ['new-events A#1', 'edge-over-10 A#1'],
        deliveries: ['screen:pending', 'hook:pending', 'screen:pending'],
      },
    },
    {
      name: 'crosses: an armed value going beyond fires and writes the disarmed memory',
      input: input({ items: [event('A', 12)], previous: new Map([['A', stored(2, event('A', 9).data)]]) }),
      expected: { snapshots: ['A#3'], memory: [`edge-over-10 A armed=false fired=${AT}`], alerts: ['edge-over-10 A#3'], deliveries: ['screen:pending'] },
    },
    {
      name: 'crosses: back by rearm re-arms (a memory write, no alert)',
      input: input({
        items: [event('A', 8)],
        previous: new Map([['A', stored(3, event('A', 12).data)]]),
        memory: memoryOf({ A: { 'edge-over-10': { armed: false, lastFiredAt: '2026-11-21T17:00:00.000Z' } } }),
      }),
      expected: { snapshots: ['A#4'], memory: ['edge-over-10 A armed=true fired=2026-11-21T17:00:00.000Z'], alerts: [], deliveries: [] },
    },
    {
      name: 'crosses: still beyond while disarmed: no alert, no memory write',
      input: input({
        items: [event('A', 13)],
        previous: new Map([['A', stored(3, event('A', 12).data)]]),
        memory: memoryOf({ A: { 'edge-over-10': { armed: false, lastFiredAt: '2026-11-21T17:00:00.000Z' } } }),
      }),
      expected: { snapshots: ['A#4'], memory: [], alerts: [], deliveries: [] },
    },
    {
      name: 'crosses: a first judgement that finds the value already beyond keeps it disarmed, without an alert',
      input: input({ items: [event('A', 13)], previous: new Map([['A', stored(1, event('A', 12).data)]]) }),
      expected: { snapshots: ['A#2'], memory: ['edge-over-10 A armed=false fired=-'], alerts: [], deliveries: [] },
    },
    {
      name: 'crosses: a first judgement below the threshold writes no memory (armed is derived again)',
      input: input({ items: [event('A', 7)], previous: new Map([['A', stored(1, event('A', 6).data)]]) }),
      expected: { snapshots: ['A#2'], memory: [], alerts: [], deliveries: [] },
    },
    {
      name: 'an entity twice in a page: the second is judged against the first',
      input: input({ items: [event('A', 12), event('A', 8), event('A', 12)], previous: new Map([['A', stored(1, event('A', 9).data)]]) }),
      expected: {
        snapshots: ['A#2', 'A#3', 'A#4'],
        memory: [`edge-over-10 A armed=false fired=${AT}`],
        alerts: ['edge-over-10 A#2', 'edge-over-10 A#4'],
        deliveries: ['screen:pending', 'screen:pending'],
      },
    },
    {
      name: 'digest rule: its deliveries wait in the batch',
      input: input({ rules: [digested], items: [event('A', 14)], previous: new Map([['A', stored(1, event('A', 9).data)]]) }),
      expected: { snapshots: ['A#2'], memory: [`daily A armed=true fired=${AT}`], alerts: ['daily A#2'], deliveries: ['mail:digest'] },
    },
    {
      name: 'no rules: snapshots only',
      input: input({ rules: [], items: [event('A', 14)], previous: new Map([['A', stored(1, event('A', 9).data)]]) }),
      expected: { snapshots: ['A#2'], memory: [], alerts: [], deliveries: [] },
    },
  ])('$name', ({ input, expected }) => {
    expect(outline(input)).toEqual(expected);
  });

  it('derives the alert from its cause, with the whole current snapshot and fired_at in whole seconds', () => {
    const p = plan(input({ items: [event('A', 12)], previous: new Map([['A', stored(2, event('A', 9).data)]]) }));
    expect(p.at).toBe(AT);
    expect(p.snapshots).toEqual([{ key: 'A', seq: 3, text: JSON.stringify(event('A', 12).data) }]);
    expect(p.alerts).toEqual([
      {
        seq: 3,
        alert: {
          id: alertId(causeKey('edge-over-10', 'events', 'A', 3)),
          rule: 'edge-over-10',
          severity: 'info',
          source: 'events',
          entity: 'A',
          trigger: 'crosses',
          fired_at: '2026-11-21T18:00:03Z',
          summary: expect.any(String),
          changes: [{ field: 'edge_pp', from: 9, to: 12 }],
          current: { event_ticker: 'A', edge_pp: 12 },
        },
      },
    ]);
    expect(p.deliveries).toEqual([{ alertId: p.alerts[0]!.alert.id, channel: 'screen', status: 'pending' }]);
  });

  it('is a dry run by itself: it changes none of its inputs, so planning again gives the same plan', () => {
    const previous = new Map([['A', stored(2, event('A', 9).data)]]);
    const memory = memoryOf({ A: { 'new-events': { armed: true, lastFiredAt: null } } });
    const planned = input({ rules: [above10, newEvents], items: [event('A', 12), event('B', 1)], previous, memory });
    const before = structuredClone({ previous: [...previous], memory: [...memory].map(([k, m]) => [k, [...m]]) });
    const first = plan(planned);
    expect({ previous: [...previous], memory: [...memory].map(([k, m]) => [k, [...m]]) }).toEqual(before);
    expect(first.alerts.map((a) => a.alert.id)).toHaveLength(2);
    expect(plan(planned)).toEqual(first);
  });
});
