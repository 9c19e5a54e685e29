// Silences: an alert that matches an active silence when it fires is stored and never sent.
// Matchers are globs (`*`: any run of characters) on the rule, entity and source. Pure.
import type { Alert, Silence, SilenceMatchers } from '../core/types.ts';

export type { Silence, SilenceMatchers } from '../core/types.ts';

const globs = new Map<string, RegExp>();

/** Whether `value` matches `pattern`, where `*` matches any run of characters (none included). */
export function globMatches(pattern: string, value: string): boolean {
  let regex = globs.get(pattern);
  if (!regex) {
    regex = new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`, 's');
    if (globs.size > 1000) globs.clear();
    globs.set(pattern, regex);
  }
  return regex.test(value);
}

/** Whether a silence is active at `at` and each of its matchers matches the alert. */
export function silenceMatches(silence: Silence, alert: Pick<Alert, 'rule' | 'entity' | 'source'>, at: string): boolean {
  const atMs = Date.parse(at);
  return Date.parse(silence.starts_at) <= atMs && atMs < Date.parse(silence.ends_at) && mutes(silence.matchers, alert);
}

/** Whether each of a silence's matchers matches the alert, whenever it is active. */
export function mutes(matchers: SilenceMatchers, alert: Pick<Alert, 'rule' | 'entity' | 'source'>): boolean {
  const { rule, entity, source } = matchers;
  return (
    (rule === undefined || globMatches(rule, alert.rule)) &&
    (entity === undefined || globMatches(entity, alert.entity)) &&
    (source === undefined || globMatches(source, alert.source))
  );
}

/** The first silence that mutes the alert when it fired, if any. */
export function silencedBy(silences: readonly Silence[], alert: Pick<Alert, 'rule' | 'entity' | 'source' | 'fired_at'>): Silence | undefined {
  return silences.find((silence) => silenceMatches(silence, alert, alert.fired_at));
}
