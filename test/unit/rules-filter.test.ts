import { describe, expect, it } from 'vitest';
import type { FilterClause, FilterOperator } from '../../src/rules/index.ts';
import { matchesFilter } from '../../src/rules/filter.ts';
import { getPath } from '../../src/rules/path.ts';

const snapshot = {
  event_ticker: 'KXFED-25DEC',
  series_category: 'politics',
  confidence_score: 6,
  edge_pp: -12.5,
  eligible: null,
  tags: ['fed', 'rates'],
  actual: { value: 1_200_000, unit: 'vehicles', formatted: '1.2M' },
  outcome_probabilities: [{ evidence_grade: 'A' }],
};

describe('getPath', () => {
  it.each([
    { path: 'event_ticker', expected: 'KXFED-25DEC' },
    { path: 'actual.value', expected: 1_200_000 },
    { path: 'actual.formatted', expected: '1.2M' },
    { path: 'actual.missing', expected: undefined },
    { path: 'edge_pp.value', expected: undefined },
    { path: 'eligible.x', expected: undefined },
    { path: 'outcome_probabilities.0.evidence_grade', expected: 'A' },
    { path: 'outcome_probabilities.1.evidence_grade', expected: undefined },
    { path: 'outcome_probabilities.first', expected: undefined },
    { path: 'nope', expected: undefined },
    { path: 'toString', expected: undefined },
  ])('$path', ({ path, expected }) => {
    expect(getPath(snapshot, path)).toEqual(expected);
  });
});

const one = (field: string, op: FilterOperator, value: unknown): FilterClause[] => [{ field, conditions: [{ op, value }] }];

describe('matchesFilter: every operator', () => {
  it.each([
    { field: 'confidence_score', op: 'gt', value: 5, expected: true },
    { field: 'confidence_score', op: 'gt', value: 6, expected: false },
    { field: 'confidence_score', op: 'gte', value: 6, expected: true },
    { field: 'confidence_score', op: 'gte', value: 6.1, expected: false },
    { field: 'confidence_score', op: 'lt', value: 6, expected: false },
    { field: 'confidence_score', op: 'lt', value: 7, expected: true },
    { field: 'confidence_score', op: 'lte', value: 6, expected: true },
    { field: 'confidence_score', op: 'lte', value: 5, expected: false },
    { field: 'edge_pp', op: 'lt', value: -10, expected: true },
    { field: 'actual.value', op: 'gte', value: 1_000_000, expected: true },
    { field: 'series_category', op: 'gt', value: 5, expected: false },
    { field: 'eligible', op: 'gt', value: 0, expected: false },
    { field: 'missing', op: 'lt', value: 100, expected: false },
    { field: 'series_category', op: 'eq', value: 'politics', expected: true },
    { field: 'series_category', op: 'eq', value: 'Politics', expected: false },
    { field: 'confidence_score', op: 'eq', value: 6, expected: true },
    { field: 'confidence_score', op: 'eq', value: '6', expected: false },
    { field: 'eligible', op: 'eq', value: null, expected: true },
    { field: 'missing', op: 'eq', value: 'x', expected: false },
    { field: 'series_category', op: 'ne', value: 'crypto', expected: true },
    { field: 'series_category', op: 'ne', value: 'politics', expected: false },
    { field: 'missing', op: 'ne', value: 'x', expected: true },
    { field: 'event_ticker', op: 'in', value: ['KXFED-25DEC', 'KXCPI-25NOV'], expected: true },
    { field: 'event_ticker', op: 'in', value: ['KXCPI-25NOV'], expected: false },
    { field: 'missing', op: 'in', value: ['x'], expected: false },
    { field: 'event_ticker', op: 'not_in', value: ['KXCPI-25NOV'], expected: true },
    { field: 'event_ticker', op: 'not_in', value: ['KXFED-25DEC'], expected: false },
    { field: 'missing', op: 'not_in', value: ['x'], expected: true },
    { field: 'event_ticker', op: 'contains', value: 'FED', expected: true },
    { field: 'event_ticker', op: 'contains', value: 'fed', expected: false },
    { field: 'tags', op: 'contains', value: 'rates', expected: true },
    { field: 'tags', op: 'contains', value: 'rate', expected: false },
    { field: 'confidence_score', op: 'contains', value: 6, expected: false },
    { field: 'missing', op: 'contains', value: 'x', expected: false },
  ] as const)('$field $op $value: $expected', ({ field, op, value, expected }) => {
    expect(matchesFilter(one(field, op, value), snapshot)).toBe(expected);
  });
});

describe('matchesFilter: clauses', () => {
  it.each([
    { name: 'empty filter holds', filter: [], expected: true },
    {
      name: 'all clauses hold',
      filter: [...one('series_category', 'eq', 'politics'), ...one('confidence_score', 'gte', 6), ...one('event_ticker', 'in', ['KXFED-25DEC'])],
      expected: true,
    },
    { name: 'one clause fails', filter: [...one('series_category', 'eq', 'politics'), ...one('confidence_score', 'gte', 7)], expected: false },
    {
      name: 'range on one field',
      filter: [{ field: 'confidence_score', conditions: [{ op: 'gte', value: 5 }, { op: 'lt', value: 6 }] }],
      expected: false,
    },
    {
      name: 'range on one field holds',
      filter: [{ field: 'confidence_score', conditions: [{ op: 'gte', value: 5 }, { op: 'lte', value: 6 }] }],
      expected: true,
    },
  ] as Array<{ name: string; filter: FilterClause[]; expected: boolean }>)('$name', ({ filter, expected }) => {
    expect(matchesFilter(filter, snapshot)).toBe(expected);
  });
});
