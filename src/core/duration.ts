// Durations as written in rule files and the environment: `30s`, `15m`, `2h`, `1d` (also `500ms`).

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Milliseconds for a duration string, zero included (`0s`), or undefined when it is not one. */
export function parseDurationOrZero(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(text.trim());
  if (!match) return undefined;
  const value = Number(match[1]) * UNIT_MS[match[2]!]!;
  return Number.isFinite(value) ? value : undefined;
}

/** Milliseconds for a duration string, or undefined when it is not one or is zero. */
export function parseDuration(text: string): number | undefined {
  const ms = parseDurationOrZero(text);
  return ms !== undefined && ms > 0 ? ms : undefined;
}

/** A duration written in its largest whole unit (`10m`, `90s`, `300ms`), for messages. */
export function formatDuration(ms: number): string {
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    if (ms >= UNIT_MS[unit]! && ms % UNIT_MS[unit]! === 0) return `${ms / UNIT_MS[unit]!}${unit}`;
  }
  return `${ms}ms`;
}
