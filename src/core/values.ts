// Small helpers on plain JSON values.

/** A map (a plain object), not null and not a list. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
