// Small helpers on snapshot values (plain JSON).

/** Null and absent count as the same thing everywhere in rules: "no value". */
export function isAbsent(value: unknown): value is null | undefined {
  return value === null || value === undefined;
}

/** A finite number, or undefined for anything else (null, absent, strings, objects). */
export function asNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** Structural equality of JSON values; null and absent are equal. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (isAbsent(a) || isAbsent(b)) return isAbsent(a) && isAbsent(b);
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object') return Number.isNaN(a) && Number.isNaN(b);
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, i) => deepEqual(item, b[i]));
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  // Keys whose value is null count as absent, as at the top level.
  const keys = new Set([...Object.keys(left), ...Object.keys(right)]);
  for (const key of keys) if (!deepEqual(left[key], right[key])) return false;
  return true;
}

/** The elements of list `after` that list `before` does not have (anything else counts as an empty list). */
export function addedElements(before: unknown, after: unknown): unknown[] {
  const had = Array.isArray(before) ? before : [];
  return Array.isArray(after) ? after.filter((item) => !had.some((old) => deepEqual(old, item))) : [];
}
