// The sample `render` shows without --entity: moved so that the rule's own trigger reports it.
import { describe, expect, it } from 'vitest';
import type { Trigger } from '../../src/rules/index.ts';
import { sampleForTrigger } from '../../src/rules/preview.ts';
import { isBeyond } from '../../src/rules/evaluate.ts';

const crosses = (t: Partial<Extract<Trigger, { type: 'crosses' }>>): Trigger => ({ type: 'crosses', field: 'x', abs: false, rearm: 0, ...t });

describe('sampleForTrigger', () => {
  it.each([
    { name: 'above a threshold the sample stays under', trigger: crosses({ above: 20 }), before: 8.1, after: 12.3, expected: [19, 21] },
    { name: 'above, with a re-arm distance', trigger: crosses({ above: 20, rearm: 2 }), before: 8.1, after: 12.3, expected: [17, 21] },
    { name: 'below, whole numbers (a rank): the next whole number beyond', trigger: crosses({ below: 2 }), before: 7, after: 2, expected: [3, 1] },
    { name: 'above, a price between 0 and 1', trigger: crosses({ above: 0.95 }), before: 0.5, after: 0.62, expected: [0.9025, 0.9975] },
    { name: 'below zero', trigger: crosses({ below: 0 }), before: 5, after: 3, expected: [1, -1] },
  ])('crosses $name', ({ trigger, before, after, expected }) => {
    const moved = sampleForTrigger(trigger, { x: before, y: 'kept' }, { x: after, y: 'kept' });
    expect([moved.previous.x, moved.current.x]).toEqual(expected);
    expect(moved.current.y).toBe('kept');
    const t = trigger as Extract<Trigger, { type: 'crosses' }>;
    expect(isBeyond(t, moved.previous.x as number)).toBe(false);
    expect(isBeyond(t, moved.current.x as number)).toBe(true);
  });

  it('keeps a sample that crosses already', () => {
    const previous = { x: 8.1 };
    const current = { x: 12.3 };
    expect(sampleForTrigger(crosses({ above: 10 }), previous, current)).toEqual({ previous, current });
  });

  it.each([
    { direction: 'up' as const, before: 8.1, after: 12.3, expected: 38.1 },
    { direction: 'down' as const, before: 8.1, after: 12.3, expected: -21.9 },
    { direction: 'any' as const, before: 5, after: 7, expected: 35 },
  ])('moves $direction by 1.5 times `by` when the sample moves less', ({ direction, before, after, expected }) => {
    const moved = sampleForTrigger({ type: 'moves', field: 'x', by: 20, direction }, { x: before }, { x: after });
    expect(moved).toEqual({ previous: { x: before }, current: { x: expected } });
  });

  it('keeps other triggers, and a field that is not a number at the top level', () => {
    const previous = { x: 'a', n: { value: 1 } };
    const current = { x: 'b', n: { value: 2 } };
    expect(sampleForTrigger({ type: 'changes', field: 'x' }, previous, current)).toEqual({ previous, current });
    expect(sampleForTrigger(crosses({ field: 'n.value', above: 5 }), previous, current)).toEqual({ previous, current });
  });
});
