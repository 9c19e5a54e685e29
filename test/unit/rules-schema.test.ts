// The rule types come from the zod schemas: what each schema makes of what a rule file says, and
// the fields rules may name, read from the API's schemas.
import { describe, expect, it } from 'vitest';
import { EventRow, KpiRow, RunStatus } from '../../src/api/schemas.ts';
import type { SourceName } from '../../src/core/types.ts';
import { checkField, FilterSchema, RuleSchema, SOURCE_FIELDS, TriggerSchema } from '../../src/rules/index.ts';

describe('FilterSchema: the filter map as clauses', () => {
  it.each([
    ['absent', undefined, []],
    ['empty (null)', null, []],
    ['a value is equality', { series_category: 'politics' }, [{ field: 'series_category', conditions: [{ op: 'eq', value: 'politics' }] }]],
    ['null is equality with null', { eligible: null }, [{ field: 'eligible', conditions: [{ op: 'eq', value: null }] }]],
    ['a list is in', { event_ticker: ['A', 'B'] }, [{ field: 'event_ticker', conditions: [{ op: 'in', value: ['A', 'B'] }] }]],
    [
      'an operator map, one condition per operator',
      { confidence_score: { lte: 9, gte: 6 } },
      [{ field: 'confidence_score', conditions: [{ op: 'gte', value: 6 }, { op: 'lte', value: 9 }] }],
    ],
    [
      'clauses in the order written',
      { b: 1, a: { not_in: [2] }, 'actual.value': { gt: 0 } },
      [
        { field: 'b', conditions: [{ op: 'eq', value: 1 }] },
        { field: 'a', conditions: [{ op: 'not_in', value: [2] }] },
        { field: 'actual.value', conditions: [{ op: 'gt', value: 0 }] },
      ],
    ],
  ])('%s', (_name, written, clauses) => {
    expect(FilterSchema.parse(written)).toEqual(clauses);
  });

  it.each([
    ['not a map', ['a'], [], 'expected a map of field: condition, got a list'],
    ['no condition', { a: {} }, ['a'], 'no condition (gt, gte, lt, lte, eq, ne, in, not_in, contains)'],
    ['a bound that is not a number', { a: { gt: '6' } }, ['a', 'gt'], 'expected a number, got string "6"'],
    ['in without a list', { a: { in: 3 } }, ['a', 'in'], 'expected a list, got number 3'],
    ['contains a list', { a: { contains: [1] } }, ['a', 'contains'], 'expected a single value, got a list'],
  ])('%s is an issue at its path', (_name, written, path, message) => {
    const result = FilterSchema.safeParse(written);
    expect(result.error?.issues.map((issue) => ({ path: issue.path, message: issue.message }))).toEqual([{ path, message }]);
  });

  it('an unknown operator is an unknown key of its condition', () => {
    expect(FilterSchema.safeParse({ a: { gtt: 1 } }).error?.issues).toMatchObject([{ code: 'unrecognized_keys', keys: ['gtt'], path: ['a'] }]);
  });
});

describe('TriggerSchema and RuleSchema: defaults and normalised forms', () => {
  it.each([
    [{ type: 'crosses', field: 'edge_pp', above: 10 }, { type: 'crosses', field: 'edge_pp', above: 10, abs: false, rearm: 0 }],
    [{ type: 'moves', field: 'edge_pp', by: 5 }, { type: 'moves', field: 'edge_pp', by: 5, direction: 'any' }],
    [{ type: 'drops', field: 'trust_label' }, { type: 'drops', field: 'trust_label', by: 1 }],
    [{ type: 'new' }, { type: 'new' }],
  ])('%j', (written, trigger) => {
    expect(TriggerSchema.parse(written)).toEqual(trigger);
  });

  it('a trigger is chosen by its type: the keys of another type are unknown', () => {
    expect(TriggerSchema.safeParse({ type: 'moves', field: 'edge_pp', by: 5, rearm: 1 }).error?.issues).toMatchObject([
      { code: 'unrecognized_keys', keys: ['rearm'] },
    ]);
  });

  it('durations come out in milliseconds, the filter as clauses and the severity defaulted', () => {
    const rule = RuleSchema.parse({
      name: 'r',
      source: 'events',
      trigger: { type: 'new' },
      notify: ['screen'],
      cooldown: '2h',
      digest: { window: '15m' },
    });
    expect(rule).toEqual({
      name: 'r',
      source: 'events',
      trigger: { type: 'new' },
      filter: [],
      notify: ['screen'],
      severity: 'info',
      cooldownMs: 2 * 3_600_000,
      digest: { windowMs: 15 * 60_000 },
    });
    expect(RuleSchema.parse({ name: 'r', source: 'events', trigger: { type: 'new' }, notify: ['s'], digest: { cron: '0 18 * * *', timezone: 'UTC' } }).digest).toEqual({
      cron: '0 18 * * *',
      timezone: 'UTC',
    });
  });
});

describe('fields a rule may name come from the API schemas', () => {
  it.each<[SourceName, string[]]>([
    ['events', Object.keys(EventRow.shape)],
    ['kpis', Object.keys(KpiRow.shape)],
    ['reports', Object.keys(EventRow.shape)],
    ['runs', Object.keys(RunStatus.shape)],
  ])('every field of the API row is a field of %s', (source, fields) => {
    for (const field of fields) expect(checkField(source, field), field).toMatchObject({ ok: true });
  });

  it.each<[SourceName, string, string]>([
    ['events', 'abs_edge_pp', 'number'],
    ['kpis', 'detail', 'object'],
    ['kpis', 'actual', 'kpi-value'],
    ['kpis', 'actual.value', 'number'],
    ['kpis', 'liquidity_tier', 'ordinal'],
    ['kpis', 'near_settled', 'boolean'],
    ['events', 'outcome_probabilities', 'array'],
    ['events', 'research', 'object'],
    ['reports', 'trust_label', 'ordinal'],
    ['reports', 'trust_score', 'number'],
    ['reports', 'venue', 'string'],
    ['runs', 'title', 'string'],
  ])('%s %s is %s', (source, field, kind) => {
    expect(checkField(source, field)).toEqual({ ok: true, kind });
  });

  it('only what the API and the poller give', () => {
    expect(Object.keys(SOURCE_FIELDS.runs).sort()).toEqual(['event_ticker', 'requested_url', 'run_id', 'status', 'title', 'trust_label', 'venue']);
    expect(checkField('events', 'trust_label')).toMatchObject({ ok: false });
  });
});
