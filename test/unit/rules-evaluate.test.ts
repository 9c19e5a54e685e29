import { describe, expect, it } from 'vitest';
import type { RuleState, Snapshot, SourceName } from '../../src/core/types.ts';
import type { Rule, Trigger } from '../../src/rules/index.ts';
import { evaluate } from '../../src/rules/evaluate.ts';

const NOW = new Date('2026-11-21T18:00:00Z');

function rule(trigger: Trigger, extra: Partial<Rule> = {}): Rule {
  return { name: 'r', source: 'events', trigger, filter: [], notify: ['screen'], severity: 'info', file: 'x.yaml', line: 1, ...extra };
}

/** Runs a rule over a sequence of snapshots of one entity (the first is the stored baseline). */
function fireSequence(r: Rule, values: Snapshot[]): boolean[] {
  let prev: Snapshot | undefined = values[0];
  let state: RuleState | undefined;
  const fired: boolean[] = [];
  for (const curr of values.slice(1)) {
    const result = evaluate(r, prev, curr, state, NOW);
    fired.push(result.fired);
    state = result.state;
    prev = curr;
  }
  return fired;
}

const edge = (edge_pp: unknown): Snapshot => ({ event_ticker: 'KXFED-25DEC', name: 'Fed decision December', edge_pp });

describe('crosses', () => {
  const above10 = rule({ type: 'crosses', field: 'edge_pp', above: 10, abs: false, rearm: 0 });
  const above10rearm2 = rule({ type: 'crosses', field: 'edge_pp', above: 10, abs: false, rearm: 2 });
  const above10abs = rule({ type: 'crosses', field: 'edge_pp', above: 10, abs: true, rearm: 2 });
  const below3 = rule({ type: 'crosses', field: 'edge_pp', below: 3, abs: false, rearm: 1 });

  it.each([
    { name: 'boundary: value == T is not beyond', r: above10, values: [8, 10, 10.01], expected: [false, true] },
    { name: 'plain crossing', r: above10, values: [9, 12], expected: [true] },
    { name: 'stays above: fires once', r: above10, values: [9, 12, 13, 15], expected: [true, false, false] },
    { name: 'rearm 0 re-arms at T', r: above10, values: [9, 12, 10, 11], expected: [true, false, true] },
    { name: 'rearm sequence 12 -> 9 -> 13 -> 8 -> 11', r: above10rearm2, values: [5, 12, 9, 13, 8, 11], expected: [true, false, false, false, true] },
    { name: 'rearm exactly at T - rearm', r: above10rearm2, values: [5, 12, 8, 10.5], expected: [true, false, true] },
    { name: 'abs: -12 crosses above 10', r: above10abs, values: [-5, -12], expected: [true] },
    { name: 'abs: -12 then 12 does not fire again', r: above10abs, values: [-5, -12, 12], expected: [true, false] },
    { name: 'abs: re-arms at |value| <= 8', r: above10abs, values: [0, -12, -8, 11], expected: [true, false, true] },
    { name: 'no abs: -12 is not above 10', r: above10, values: [0, -12], expected: [false] },
    { name: 'below: 3 is not beyond', r: below3, values: [5, 3, 2.9], expected: [false, true] },
    { name: 'below: re-arms at T + rearm', r: below3, values: [5, 2, 3.5, 2, 4, 1], expected: [true, false, false, false, true] },
    { name: 'null changes nothing', r: above10, values: [9, null, 12], expected: [false, true] },
    { name: 'null while disarmed keeps disarmed', r: above10rearm2, values: [9, 12, null, 13], expected: [true, false, false] },
    { name: 'non-number changes nothing', r: above10, values: [9, '12', 12], expected: [false, true] },
    { name: 'null to value beyond fires', r: above10, values: [null, 12], expected: [true] },
  ])('$name', ({ r, values, expected }) => {
    expect(fireSequence(r, values.map(edge))).toEqual(expected);
  });

  it.each([
    { name: 'prev already beyond: starts disarmed', prev: 12, curr: 13, fired: false, armed: false },
    { name: 'prev below: starts armed and fires', prev: 9, curr: 13, fired: true, armed: false },
    { name: 'prev absent value: starts armed', prev: null, curr: 13, fired: true, armed: false },
    { name: 'prev beyond, curr rearmed', prev: 12, curr: 7, fired: false, armed: true },
  ])('first evaluation derives memory from prev: $name', ({ prev, curr, fired, armed }) => {
    const result = evaluate(above10rearm2, edge(prev), edge(curr), undefined, NOW);
    expect(result.fired).toBe(fired);
    expect(result.state.armed).toBe(armed);
  });

  it('a crossing while the filter does not hold disarms silently', () => {
    const r = rule(
      { type: 'crosses', field: 'edge_pp', above: 10, abs: false, rearm: 2 },
      { filter: [{ field: 'series_category', conditions: [{ op: 'eq', value: 'politics' }] }] },
    );
    const crypto = (v: number) => ({ ...edge(v), series_category: 'crypto' });
    const politics = (v: number) => ({ ...edge(v), series_category: 'politics' });
    const first = evaluate(r, crypto(5), crypto(12), undefined, NOW);
    expect(first).toMatchObject({ fired: false, triggered: true, suppressed: 'filter', state: { armed: false, lastFiredAt: null } });
    // The filter now holds but the rule is disarmed: no alert until it re-arms.
    const second = evaluate(r, crypto(12), politics(13), first.state, NOW);
    expect(second.fired).toBe(false);
    const rearmed = evaluate(r, politics(13), politics(7), second.state, NOW);
    expect(rearmed.state.armed).toBe(true);
    const third = evaluate(r, politics(7), politics(11), rearmed.state, NOW);
    expect(third.fired).toBe(true);
    expect(third.state.lastFiredAt).toBe(NOW.toISOString());
  });

  it('summary and changes', () => {
    const result = evaluate(above10abs, { ...edge(8.1), confidence_score: 6 }, { ...edge(12.34), confidence_score: 7 }, undefined, NOW);
    expect(result.summary).toBe('Fed decision December: edge +12.3 pp crossed above 10 pp');
    expect(result.changes).toEqual([
      { field: 'edge_pp', from: 8.1, to: 12.34 },
      { field: 'confidence_score', from: 6, to: 7 },
    ]);
    const negative = evaluate(above10abs, edge(-5), edge(-12), undefined, NOW);
    expect(negative.summary).toBe('Fed decision December: edge -12.0 pp crossed above 10 pp in absolute value');
  });
});

describe('cooldown', () => {
  const r = rule({ type: 'crosses', field: 'edge_pp', above: 10, abs: false, rearm: 0 }, { cooldownMs: 2 * 3_600_000 });
  it.each([
    { name: 'within cooldown: suppressed, memory still updated', lastFiredAt: '2026-11-21T17:00:00.000Z', fired: false },
    { name: 'exactly at cooldown end: reported', lastFiredAt: '2026-11-21T16:00:00.000Z', fired: true },
    { name: 'after cooldown: reported', lastFiredAt: '2026-11-21T10:00:00.000Z', fired: true },
    { name: 'never fired: reported', lastFiredAt: null, fired: true },
  ])('$name', ({ lastFiredAt, fired }) => {
    const result = evaluate(r, edge(9), edge(12), { armed: true, lastFiredAt }, NOW);
    expect(result.fired).toBe(fired);
    expect(result.triggered).toBe(true);
    expect(result.state.armed).toBe(false);
    expect(result.state.lastFiredAt).toBe(fired ? NOW.toISOString() : lastFiredAt);
    expect(result.suppressed).toBe(fired ? undefined : 'cooldown');
  });
});

describe('moves', () => {
  const anyBy5 = rule({ type: 'moves', field: 'edge_pp', by: 5, direction: 'any' });
  const upBy5 = rule({ type: 'moves', field: 'edge_pp', by: 5, direction: 'up' });
  const downBy5 = rule({ type: 'moves', field: 'edge_pp', by: 5, direction: 'down' });
  it.each([
    { r: anyBy5, from: 3, to: 8, fired: true },
    { r: anyBy5, from: 3.1, to: 8.1, fired: true }, // 4.999999999999999 in floats
    { r: anyBy5, from: 3, to: 7.9, fired: false },
    { r: anyBy5, from: 8, to: 3, fired: true },
    { r: upBy5, from: 8, to: 3, fired: false },
    { r: upBy5, from: -2, to: 3, fired: true },
    { r: downBy5, from: 8, to: 3, fired: true },
    { r: downBy5, from: 3, to: 8, fired: false },
    { r: anyBy5, from: null, to: 8, fired: false },
    { r: anyBy5, from: 8, to: null, fired: false },
  ])('$r.trigger.direction $from -> $to: $fired', ({ r, from, to, fired }) => {
    expect(evaluate(r, edge(from), edge(to), undefined, NOW).fired).toBe(fired);
  });

  it('summary shows the move', () => {
    expect(evaluate(anyBy5, edge(3.1), edge(8.3), undefined, NOW).summary).toBe('Fed decision December: edge +3.1 pp -> +8.3 pp (+5.2 pp)');
  });
});

describe('flips', () => {
  const any = rule({ type: 'flips', field: 'near_settled' }, { source: 'kpis' });
  const toTrue = rule({ type: 'flips', field: 'near_settled', to: true }, { source: 'kpis' });
  it.each([
    { r: any, from: false, to: true, fired: true },
    { r: any, from: true, to: false, fired: true },
    { r: any, from: true, to: true, fired: false },
    { r: toTrue, from: false, to: true, fired: true },
    { r: toTrue, from: true, to: false, fired: false },
    { r: any, from: null, to: true, fired: false },
    { r: any, from: undefined, to: true, fired: false },
    { r: any, from: 0, to: 1, fired: false },
  ])('$from -> $to (to: $r.trigger.to): $fired', ({ r, from, to, fired }) => {
    const snap = (v: unknown): Snapshot => (v === undefined ? { id: 'k' } : { id: 'k', near_settled: v });
    expect(evaluate(r, snap(from), snap(to), undefined, NOW).fired).toBe(fired);
  });
});

describe('changes', () => {
  const anyChange = rule({ type: 'changes', field: 'status' }, { source: 'runs' });
  const toDone = rule({ type: 'changes', field: 'status', to: ['completed', 'failed'] }, { source: 'runs' });
  const fromProcessing = rule({ type: 'changes', field: 'status', from: 'processing', to: 'completed' }, { source: 'runs' });
  const run = (status: unknown): Snapshot => ({ run_id: 'r1', event_ticker: 'KXFED-25DEC', status });
  it.each([
    { r: anyChange, from: 'processing', to: 'completed', fired: true },
    { r: anyChange, from: 'completed', to: 'completed', fired: false },
    { r: toDone, from: 'processing', to: 'completed', fired: true },
    { r: toDone, from: 'processing', to: 'failed', fired: true },
    { r: toDone, from: 'failed', to: 'processing', fired: false },
    { r: fromProcessing, from: 'processing', to: 'completed', fired: true },
    { r: fromProcessing, from: 'failed', to: 'completed', fired: false },
    { r: anyChange, from: null, to: 'processing', fired: true },
    { r: anyChange, from: 'processing', to: null, fired: true },
  ])('$from -> $to: $fired', ({ r, from, to, fired }) => {
    expect(evaluate(r, run(from), run(to), undefined, NOW).fired).toBe(fired);
  });

  it('deep compare of objects', () => {
    const r = rule({ type: 'changes', field: 'actual' }, { source: 'kpis' });
    const kpi = (value: number) => ({ id: 'k', actual: { value, unit: 'M', formatted: `${value}M` } });
    expect(evaluate(r, kpi(1), kpi(1), undefined, NOW).fired).toBe(false);
    expect(evaluate(r, kpi(1), kpi(2), undefined, NOW).fired).toBe(true);
  });

  it('summary for runs', () => {
    expect(evaluate(toDone, run('processing'), run('completed'), undefined, NOW).summary).toBe(
      'run r1 for KXFED-25DEC: status processing -> completed',
    );
  });
});

describe('drops and rises', () => {
  const report = (trust_label: unknown): Snapshot => ({ title: 'Fed decision', trust_label, trust_score: 50 });
  const drops = rule({ type: 'drops', field: 'trust_label', by: 1 }, { source: 'reports' });
  const drops2 = rule({ type: 'drops', field: 'trust_label', by: 2 }, { source: 'reports' });
  const toCaution = rule({ type: 'drops', field: 'trust_label', by: 1, to_at_most: 'Caution' }, { source: 'reports' });
  const rises = rule({ type: 'rises', field: 'trust_label', by: 1, to_at_least: 'Good' }, { source: 'reports' });
  it.each([
    { r: drops, from: 'Good', to: 'Caution', fired: true },
    { r: drops, from: 'Caution', to: 'Good', fired: false },
    { r: drops, from: 'Good', to: 'Good', fired: false },
    { r: drops, from: 'Strong', to: 'Avoid', fired: true },
    { r: drops2, from: 'Good', to: 'Caution', fired: false },
    { r: drops2, from: 'Good', to: 'High Risk', fired: true },
    { r: toCaution, from: 'Good', to: 'Caution', fired: true },
    { r: toCaution, from: 'Good', to: 'High Risk', fired: true },
    { r: toCaution, from: 'Strong', to: 'Good', fired: false },
    { r: toCaution, from: 'Caution', to: 'Avoid', fired: true },
    { r: drops, from: 'Good', to: 'Unheard', fired: false },
    { r: drops, from: 'Unheard', to: 'Avoid', fired: false },
    { r: drops, from: null, to: 'Avoid', fired: false },
    { r: drops, from: 'Good', to: null, fired: false },
    { r: rises, from: 'Caution', to: 'Good', fired: true },
    { r: rises, from: 'Avoid', to: 'Caution', fired: false },
    { r: rises, from: 'Good', to: 'Caution', fired: false },
  ])('$r.trigger.type $from -> $to: $fired', ({ r, from, to, fired }) => {
    expect(evaluate(r, report(from), report(to), undefined, NOW).fired).toBe(fired);
  });

  it.each([
    { field: 'evidence_grade', type: 'drops' as const, from: 'A', to: 'C', fired: true },
    { field: 'evidence_grade', type: 'rises' as const, from: 'A', to: 'C', fired: false },
    { field: 'liquidity_tier', type: 'rises' as const, from: 'low', to: 'medium', fired: true },
    { field: 'liquidity_tier', type: 'drops' as const, from: 'low', to: 'medium', fired: false },
  ])('order of $field: $type $from -> $to', ({ field, type, from, to, fired }) => {
    const r = rule({ type, field, by: 1 }, { source: 'kpis' });
    expect(evaluate(r, { [field]: from }, { [field]: to }, undefined, NOW).fired).toBe(fired);
  });

  const numericDrop = rule({ type: 'drops', field: 'trust_score', by: 5, to_at_most: 40 }, { source: 'reports' });
  const numericRise = rule({ type: 'rises', field: 'confidence_score', by: 2, to_at_least: 7 });
  it.each([
    { r: numericDrop, from: 50, to: 40, fired: true },
    { r: numericDrop, from: 50, to: 41, fired: false },
    { r: numericDrop, from: 44, to: 40, fired: false },
    { r: numericRise, from: 5, to: 7, fired: true },
    { r: numericRise, from: 4, to: 6, fired: false },
    { r: numericRise, from: 6, to: 7, fired: false },
  ])('numeric $r.trigger.field $from -> $to: $fired', ({ r, from, to, fired }) => {
    const field = r.trigger.type === 'new' ? '' : r.trigger.field;
    expect(evaluate(r, { [field]: from }, { [field]: to }, undefined, NOW).fired).toBe(fired);
  });

  it('summary for reports', () => {
    expect(evaluate(toCaution, report('Good'), report('Caution'), undefined, NOW).summary).toBe('Fed decision: trust_label Good -> Caution');
  });
});

describe('appears', () => {
  const r = rule({ type: 'appears', field: 'actual' }, { source: 'kpis' });
  const dotted = rule({ type: 'appears', field: 'actual.value' }, { source: 'kpis' });
  const kpi = (actual: unknown): Snapshot => ({ id: 'evt_1', company_name: 'Acme', kpi_name: 'Q3 deliveries', actual });
  const value = { value: 1_200_000, unit: 'vehicles', formatted: '1.2M' };
  it.each([
    { r, from: null, to: value, fired: true },
    { r, from: undefined, to: value, fired: true },
    { r, from: value, to: value, fired: false },
    { r, from: value, to: null, fired: false },
    { r, from: null, to: null, fired: false },
    { r: dotted, from: null, to: value, fired: true },
    { r: dotted, from: { value: null, unit: 'M', formatted: '' }, to: value, fired: true },
  ])('$r.trigger.field $from -> $to: $fired', ({ r: ru, from, to, fired }) => {
    const prev = from === undefined ? { id: 'evt_1' } : kpi(from);
    expect(evaluate(ru, prev, kpi(to), undefined, NOW).fired).toBe(fired);
  });

  it.each([r, dotted])('summary uses formatted ($trigger.field)', (ru) => {
    const result = evaluate(ru, kpi(null), kpi(value), undefined, NOW);
    expect(result.summary).toBe('Acme — Q3 deliveries: actual 1.2M appeared');
    expect(result.changes[0]).toEqual({ field: ru.trigger.type === 'new' ? '' : ru.trigger.field, from: null, to: ru === r ? value : 1_200_000 });
  });
});

describe('a new entity (no previous snapshot)', () => {
  const curr = { event_ticker: 'NEW-1', name: 'New one', edge_pp: 12, near_settled: true, status: 'processing', actual: { value: 1, unit: '', formatted: '1' } };
  it.each<{ trigger: Trigger; fired: boolean }>([
    { trigger: { type: 'new' }, fired: true },
    { trigger: { type: 'crosses', field: 'edge_pp', above: 10, abs: false, rearm: 0 }, fired: true },
    { trigger: { type: 'crosses', field: 'edge_pp', above: 15, abs: false, rearm: 0 }, fired: false },
    { trigger: { type: 'appears', field: 'actual' }, fired: true },
    { trigger: { type: 'appears', field: 'missing' }, fired: false },
    { trigger: { type: 'moves', field: 'edge_pp', by: 1, direction: 'any' }, fired: false },
    { trigger: { type: 'flips', field: 'near_settled' }, fired: false },
    { trigger: { type: 'changes', field: 'status' }, fired: false },
    { trigger: { type: 'drops', field: 'edge_pp', by: 1 }, fired: false },
    { trigger: { type: 'rises', field: 'edge_pp', by: 1 }, fired: false },
  ])('$trigger.type: $fired', ({ trigger, fired }) => {
    const result = evaluate(rule(trigger), undefined, curr, undefined, NOW);
    expect(result.fired).toBe(fired);
  });

  it('new: summary names the entity; changes are limited to the trigger field', () => {
    const sources: Array<[SourceName, string]> = [
      ['events', 'New one: new event'],
      ['kpis', 'NEW-1: new KPI event'],
    ];
    for (const [source, summary] of sources) {
      expect(evaluate(rule({ type: 'new' }, { source }), undefined, { ...curr, id: 'NEW-1', name: 'New one' }, undefined, NOW).summary).toBe(summary);
    }
    const crossing = evaluate(rule({ type: 'crosses', field: 'edge_pp', above: 10, abs: false, rearm: 0 }), undefined, curr, undefined, NOW);
    expect(crossing.changes).toEqual([{ field: 'edge_pp', from: null, to: 12 }]);
    expect(crossing.state).toEqual({ armed: false, lastFiredAt: NOW.toISOString() });
  });
});

it('a rule that does not trigger keeps its cooldown memory and reports nothing', () => {
  const r = rule({ type: 'moves', field: 'edge_pp', by: 5, direction: 'any' });
  const result = evaluate(r, edge(1), edge(2), { armed: true, lastFiredAt: '2026-01-01T00:00:00.000Z' }, NOW);
  expect(result).toEqual({ fired: false, triggered: false, rearmed: false, state: { armed: true, lastFiredAt: '2026-01-01T00:00:00.000Z' }, changes: [], summary: '' });
});

describe('added', () => {
  const warnings = rule({ type: 'added', field: 'warnings' }, { name: 'hedge-warnings', source: 'baskets' });
  const basket = (list: unknown): Snapshot => ({ basket: 'rates-hedge', max_drawdown: -0.05, warnings: list });

  it.each([
    { name: 'a new element fires', values: [['a'], ['a', 'b']], expected: [true] },
    { name: 'the same list, reordered, does not', values: [['a', 'b'], ['b', 'a']], expected: [false] },
    { name: 'an element removed does not', values: [['a', 'b'], ['a']], expected: [false] },
    { name: 'gone, then back: fires again', values: [['a'], [], ['a']], expected: [false, true] },
    { name: 'from null or absent', values: [null, ['a']], expected: [true] },
    { name: 'not a list is an empty list', values: [['a'], 'a', ['a']], expected: [false, true] },
  ])('$name', ({ values, expected }) => {
    expect(fireSequence(warnings, values.map(basket))).toEqual(expected);
  });

  it('names the added elements in its changes and its summary', () => {
    const out = evaluate(warnings, basket(['thin market: X']), { ...basket(['thin market: X', 'two legs close within 7 days']), calendar_clashes: 1 }, undefined, NOW);
    expect(out.summary).toBe('rates-hedge: new warning: two legs close within 7 days');
    expect(out.changes).toEqual([
      { field: 'warnings', from: ['thin market: X'], to: ['thin market: X', 'two legs close within 7 days'], added: ['two legs close within 7 days'] },
      { field: 'calendar_clashes', from: null, to: 1 },
    ]);
    expect(evaluate(warnings, basket([]), basket(['a', 'b']), undefined, NOW).summary).toBe('rates-hedge: new warnings: a; b');
  });
});

describe('crosses on a rank (source rankings)', () => {
  const top10 = rule({ type: 'crosses', field: 'rank', below: 11, abs: false, rearm: 0 }, { source: 'rankings' });
  const outOf20 = rule({ type: 'crosses', field: 'rank', above: 20, abs: false, rearm: 0 }, { source: 'rankings' });
  const ranked = (rank: number | null): Snapshot => ({ event_ticker: 'KXFED-25DEC', title: 'Fed decision December', rank });

  it('entering the top 10 fires; leaving the ranking (rank null) re-arms; entering again fires again', () => {
    expect(fireSequence(top10, [14, 7, 3, null, 9].map(ranked))).toEqual([true, false, false, true]);
  });

  it('leaving the ranking is below every rank: `above` fires', () => {
    expect(fireSequence(outOf20, [5, null].map(ranked))).toEqual([true]);
    expect(evaluate(outOf20, ranked(5), ranked(null), undefined, NOW).summary).toBe('Fed decision December: out of the ranking (rank crossed above 20)');
  });

  it('summarizes a rank as its number', () => {
    expect(evaluate(top10, ranked(14), ranked(7), undefined, NOW).summary).toBe('Fed decision December: rank #7 crossed below 11');
  });

  it('a null on another source is no news, as before', () => {
    const events = rule({ type: 'crosses', field: 'rank', below: 11, abs: false, rearm: 0 });
    expect(fireSequence(events, [14, 7, null, 9].map(ranked))).toEqual([true, false, false]);
  });
});
