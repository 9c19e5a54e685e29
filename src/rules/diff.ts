// What changed between two snapshots of one entity.
import { kpiValue } from '../core/format.ts';
import type { Change, Snapshot } from '../core/types.ts';
import { getPath } from './path.ts';
import { deepEqual } from './values.ts';

/**
 * The top-level fields whose values differ (deep compare; null and absent are the same), sorted
 * by field name. Absent values are reported as null so that a change survives JSON. With no
 * previous snapshot every present field of `curr` is a change from null. `compared` picks the
 * fields by their values (both must pass); the others are not compared at all.
 */
export function diffSnapshots(prev: Snapshot | undefined, curr: Snapshot, compared: (value: unknown) => boolean = () => true): Change[] {
  const changes: Change[] = [];
  const compare = (field: string, from: unknown, to: unknown): void => {
    if (compared(from) && compared(to) && !deepEqual(from, to)) changes.push({ field, from: from ?? null, to: to ?? null });
  };
  for (const field of Object.keys(curr)) compare(field, prev?.[field], curr[field]);
  if (prev) for (const field of Object.keys(prev)) if (!Object.hasOwn(curr, field)) compare(field, prev[field], undefined);
  // The few changes sorted, not the every field they came from: this runs once per firing rule.
  return changes.sort((a, b) => byCodePoint(a.field, b.field));
}

/**
 * The changed top-level fields an alert records besides its trigger's own: those whose values
 * rules and messages read as values (numbers, text, flags, lists of those, KPI values such as
 * `actual`), with their old and new values. A nested record that reads as no value (`research`)
 * or a list of records (`outcome_probabilities`) is left out: it was most of the bytes an alert
 * wrote, once per firing rule, and the snapshot in `current` holds it whole.
 */
export function alertChanges(prev: Snapshot, curr: Snapshot): Change[] {
  return diffSnapshots(prev, curr, readsAsValue);
}

/** A value a message shows as such (core/format.ts): a scalar, a list of scalars, a KPI value. */
function readsAsValue(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return true;
  if (Array.isArray(value)) return value.every((item) => item === null || typeof item !== 'object');
  return kpiValue(value) !== undefined;
}

/** The change of one dotted field, or undefined when its value is the same in both. */
export function changedField(prev: Snapshot | undefined, curr: Snapshot, path: string): Change | undefined {
  const from = prev === undefined ? undefined : getPath(prev, path);
  const to = getPath(curr, path);
  return deepEqual(from, to) ? undefined : { field: path, from: from ?? null, to: to ?? null };
}

function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
