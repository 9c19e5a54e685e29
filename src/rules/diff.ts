// What changed between two snapshots of one entity.
import type { Change, Snapshot } from '../core/types.ts';
import { getPath } from './path.ts';
import { deepEqual } from './values.ts';

/**
 * The top-level fields whose values differ (deep compare; null and absent are the same), sorted
 * by field name. Absent values are reported as null so that a change survives JSON. With no
 * previous snapshot every present field of `curr` is a change from null.
 */
export function diffSnapshots(prev: Snapshot | undefined, curr: Snapshot): Change[] {
  const fields = new Set([...Object.keys(prev ?? {}), ...Object.keys(curr)]);
  const changes: Change[] = [];
  for (const field of [...fields].sort(byCodePoint)) {
    const from = prev?.[field];
    const to = curr[field];
    if (!deepEqual(from, to)) changes.push({ field, from: from ?? null, to: to ?? null });
  }
  return changes;
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
