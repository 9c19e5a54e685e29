import { describe, expect, it } from 'vitest';
import { pathTooDeep } from '../../src/api/nesting.ts';

/** `levels` objects nested under `a`, the innermost holding 1. */
const nested = (levels: number): unknown => JSON.parse('{"a":'.repeat(levels - 1) + '{"a":1}' + '}'.repeat(levels - 1));

describe('pathTooDeep', () => {
  it.each([
    ['a scalar', 1, 3, undefined],
    ['null', null, 3, undefined],
    ['a flat object', { x: 1, y: 'z' }, 1, undefined],
    ['exactly the limit', nested(3), 3, undefined],
    ['one level over the limit', nested(4), 3, ['a', 'a', 'a']],
    ['arrays count as levels', { rows: [{ ok: 1 }, { deep: [[1]] }] }, 3, ['rows', 1, 'deep']],
  ])('%s', (_name, value, max, expected) => {
    expect(pathTooDeep(value, max)).toEqual(expected);
  });

  it('walks a value far deeper than the stack allows without overflowing', () => {
    expect(pathTooDeep(nested(200_000))).toHaveLength(100);
  });
});
