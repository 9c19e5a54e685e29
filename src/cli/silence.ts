// `silence add|list|expire`: the arguments, judged without touching the store (pure).
import { randomUUID } from 'node:crypto';
import { parseDuration } from '../core/duration.ts';
import { SOURCES, type Silence, type SilenceMatchers } from '../core/types.ts';
import type { OptionValues } from './args.ts';

/** How long an expired silence is still listed. */
export const RECENTLY_EXPIRED_MS = 24 * 3_600_000;

const MATCHERS = ['rule', 'entity', 'source'] as const;

/** The silence `silence add` would store, or the one-line reason it stores none. */
export function silenceFromArgs(values: OptionValues, now: Date, user: string | undefined): { silence: Silence } | { error: string } {
  const text = (name: string): string | undefined => {
    const value = values[name];
    return typeof value === 'string' ? value : undefined;
  };
  const matchers: SilenceMatchers = {};
  for (const name of MATCHERS) {
    const value = text(name);
    if (value === undefined) continue;
    if (value.trim() === '') return { error: `--${name} needs a value (a name, or a glob with *)` };
    matchers[name] = value;
  }
  if (Object.keys(matchers).length === 0) return { error: 'needs at least one matcher: --rule NAME, --entity KEY or --source S (* matches any run of characters)' };
  if (matchers.source !== undefined && !matchers.source.includes('*') && !(SOURCES as readonly string[]).includes(matchers.source)) {
    return { error: `--source ${matchers.source}: unknown source (${SOURCES.join(', ')}, or a glob with *)` };
  }
  // Whole seconds, as alerts' fired_at: a silence made in the second an alert fires mutes it.
  const start = Math.floor(now.getTime() / 1000) * 1000;
  const forText = text('for');
  const untilText = text('until');
  if (forText !== undefined && untilText !== undefined) return { error: 'takes --for or --until, not both' };
  let endsAt: number;
  if (forText !== undefined) {
    const ms = parseDuration(forText);
    if (ms === undefined) return { error: `--for ${forText}: not a duration (write 30m, 2h, 1d)` };
    endsAt = start + ms;
  } else if (untilText !== undefined) {
    endsAt = /^\d{4}-\d{2}-\d{2}T/.test(untilText) ? Date.parse(untilText) : Number.NaN;
    if (!Number.isFinite(endsAt)) return { error: `--until ${untilText}: not an ISO time (write 2026-11-22T08:00:00Z)` };
    if (endsAt <= now.getTime()) return { error: `--until ${untilText}: the end is in the past` };
  } else {
    return { error: 'needs how long: --for DURATION (30m, 2h, 1d) or --until ISO time' };
  }
  const by = text('by') ?? user;
  return {
    silence: {
      id: randomUUID(),
      matchers,
      starts_at: new Date(start).toISOString(),
      ends_at: new Date(endsAt).toISOString(),
      comment: text('comment') ?? null,
      created_by: by !== undefined && by !== '' ? by : 'unknown',
    },
  };
}

/** A silence as `silence list` prints it. */
export function silenceLine(silence: Silence, now: Date): string {
  const matchers = Object.entries(silence.matchers).map(([name, value]) => `${name}=${value}`).join(' ');
  const state = Date.parse(silence.ends_at) <= now.getTime() ? 'expired' : Date.parse(silence.starts_at) > now.getTime() ? 'pending' : 'active';
  const comment = silence.comment ? `  "${silence.comment}"` : '';
  return `${silence.id}  ${state.padEnd(7)}  ${matchers}  ${silence.starts_at} -> ${silence.ends_at}  by ${silence.created_by}${comment}`;
}
