// Dotted access into a snapshot: `actual.value`, `research.evidence.0.slot`.

/** The value at a dotted path, or undefined when any step is missing or not an object. */
export function getPath(snapshot: unknown, path: string): unknown {
  let current: unknown = snapshot;
  for (const segment of path.split('.')) {
    if (current === null || typeof current !== 'object') return undefined;
    if (Array.isArray(current)) {
      if (!/^\d+$/.test(segment)) return undefined;
      current = current[Number(segment)];
    } else {
      if (!Object.hasOwn(current, segment)) return undefined;
      current = (current as Record<string, unknown>)[segment];
    }
  }
  return current;
}
