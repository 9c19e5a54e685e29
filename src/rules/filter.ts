// Rule filters: every clause must hold on the current snapshot.
import type { Snapshot } from '../core/types.ts';
import type { FilterClause, FilterOperator } from './schema.ts';
import { getPath } from './path.ts';
import { asNumber, deepEqual } from './values.ts';

export function matchesFilter(filter: readonly FilterClause[], snapshot: Snapshot): boolean {
  return filter.every((clause) => {
    const actual = getPath(snapshot, clause.field);
    return clause.conditions.every(({ op, value }) => holds(op, actual, value));
  });
}

function holds(op: FilterOperator, actual: unknown, expected: unknown): boolean {
  switch (op) {
    case 'eq':
      return deepEqual(actual, expected);
    case 'ne':
      return !deepEqual(actual, expected);
    case 'in':
      return Array.isArray(expected) && expected.some((item) => deepEqual(actual, item));
    case 'not_in':
      return !Array.isArray(expected) || !expected.some((item) => deepEqual(actual, item));
    case 'contains':
      if (typeof actual === 'string') return typeof expected === 'string' && actual.includes(expected);
      if (Array.isArray(actual)) return actual.some((item) => deepEqual(item, expected));
      return false;
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return compare(op, asNumber(actual), asNumber(expected));
  }
}

function compare(op: 'gt' | 'gte' | 'lt' | 'lte', actual: number | undefined, expected: number | undefined): boolean {
  if (actual === undefined || expected === undefined) return false;
  if (op === 'gt') return actual > expected;
  if (op === 'gte') return actual >= expected;
  if (op === 'lt') return actual < expected;
  return actual <= expected;
}
