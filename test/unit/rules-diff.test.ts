import { describe, expect, it } from 'vitest';
import type { Change, Snapshot } from '../../src/core/types.ts';
import { alertChanges, changedField, diffSnapshots } from '../../src/rules/diff.ts';

describe('diffSnapshots', () => {
  it.each([
    { name: 'no change', prev: { a: 1, b: 'x' }, curr: { a: 1, b: 'x' }, expected: [] },
    { name: 'one number', prev: { a: 1, b: 'x' }, curr: { a: 2, b: 'x' }, expected: [{ field: 'a', from: 1, to: 2 }] },
    {
      name: 'sorted by field name',
      prev: { z: 1, a: 1, m: 1 },
      curr: { z: 2, a: 2, m: 1 },
      expected: [
        { field: 'a', from: 1, to: 2 },
        { field: 'z', from: 1, to: 2 },
      ],
    },
    { name: 'field appears', prev: { a: 1 }, curr: { a: 1, b: 2 }, expected: [{ field: 'b', from: null, to: 2 }] },
    { name: 'field disappears', prev: { a: 1, b: 2 }, curr: { a: 1 }, expected: [{ field: 'b', from: 2, to: null }] },
    { name: 'null and absent are the same', prev: { a: 1, b: null }, curr: { a: 1 }, expected: [] },
    { name: 'equal objects (key order)', prev: { o: { x: 1, y: [1, 2] } }, curr: { o: { y: [1, 2], x: 1 } }, expected: [] },
    {
      name: 'nested change reported at the top-level field',
      prev: { actual: { value: 1, formatted: '1' } },
      curr: { actual: { value: 2, formatted: '2' } },
      expected: [{ field: 'actual', from: { value: 1, formatted: '1' }, to: { value: 2, formatted: '2' } }],
    },
    { name: 'array order matters', prev: { t: [1, 2] }, curr: { t: [2, 1] }, expected: [{ field: 't', from: [1, 2], to: [2, 1] }] },
    { name: 'type change', prev: { a: 1 }, curr: { a: '1' }, expected: [{ field: 'a', from: 1, to: '1' }] },
    {
      name: 'no previous snapshot: every present field',
      prev: undefined,
      curr: { b: 2, a: 1, c: null },
      expected: [
        { field: 'a', from: null, to: 1 },
        { field: 'b', from: null, to: 2 },
      ],
    },
  ] as Array<{ name: string; prev: Snapshot | undefined; curr: Snapshot; expected: Change[] }>)('$name', ({ prev, curr, expected }) => {
    expect(diffSnapshots(prev, curr)).toEqual(expected);
  });
});

describe('changedField', () => {
  const prev = { actual: null, market_implied: { value: 5, formatted: '5' } };
  const curr = { actual: { value: 7, formatted: '7' }, market_implied: { value: 5, formatted: '5.0' } };
  it.each([
    { path: 'actual.value', expected: { field: 'actual.value', from: null, to: 7 } },
    { path: 'market_implied.value', expected: undefined },
    { path: 'market_implied.formatted', expected: { field: 'market_implied.formatted', from: '5', to: '5.0' } },
    { path: 'missing', expected: undefined },
  ])('$path', ({ path, expected }) => {
    expect(changedField(prev, curr, path)).toEqual(expected);
  });

  it('no previous snapshot', () => {
    expect(changedField(undefined, curr, 'actual.value')).toEqual({ field: 'actual.value', from: null, to: 7 });
  });
});

describe('alertChanges', () => {
  const research = (narrative: string) => ({ catalysts: { forward: { narrative } }, evidence: [{ slot: 'a', findings: narrative }] });
  it.each([
    {
      name: 'numbers, text, flags and bookkeeping, sorted',
      prev: { edge_pp: 8.1, name: 'A', eligible: true, history_id: 1 },
      curr: { edge_pp: 12.3, name: 'B', eligible: false, history_id: 2 },
      expected: [
        { field: 'edge_pp', from: 8.1, to: 12.3 },
        { field: 'eligible', from: true, to: false },
        { field: 'history_id', from: 1, to: 2 },
        { field: 'name', from: 'A', to: 'B' },
      ],
    },
    {
      name: 'a nested record that reads as no value (research) is left out',
      prev: { edge_pp: 1, research: research('old') },
      curr: { edge_pp: 2, research: research('new') },
      expected: [{ field: 'edge_pp', from: 1, to: 2 }],
    },
    {
      name: 'research appearing is left out too',
      prev: { edge_pp: 1 },
      curr: { edge_pp: 1, research: research('new') },
      expected: [],
    },
    {
      name: 'a list of records (outcome_probabilities) is left out',
      prev: { outcome_probabilities: [{ market_ticker: 'A', model_probability: 40 }] },
      curr: { outcome_probabilities: [{ market_ticker: 'A', model_probability: 45 }] },
      expected: [],
    },
    {
      name: 'a list of text is kept',
      prev: { warnings: ['a'] },
      curr: { warnings: ['a', 'b'] },
      expected: [{ field: 'warnings', from: ['a'], to: ['a', 'b'] }],
    },
    {
      name: 'a KPI value is kept, also from null',
      prev: { actual: null, market_implied: { value: 5, unit: '%', formatted: '5%' } },
      curr: { actual: { value: 7, unit: '%', formatted: '7%' }, market_implied: { value: 6, unit: '%', formatted: '6%' } },
      expected: [
        { field: 'actual', from: null, to: { value: 7, unit: '%', formatted: '7%' } },
        { field: 'market_implied', from: { value: 5, unit: '%', formatted: '5%' }, to: { value: 6, unit: '%', formatted: '6%' } },
      ],
    },
  ] as Array<{ name: string; prev: Snapshot; curr: Snapshot; expected: Change[] }>)('$name', ({ prev, curr, expected }) => {
    expect(alertChanges(prev, curr)).toEqual(expected);
  });
});
