// Inhibition (`unless`): an alert is recorded, not sent, while one of its rule's entries holds.
// Sources are related by event ticker; pure.
import type { Inhibition, Snapshot, SourceName } from '../core/types.ts';
import type { RelatedSnapshots } from '../core/plan.ts';
import { matchesFilter } from './filter.ts';
import type { Rule } from './schema.ts';

/** Sources whose entities belong to one event, and so can be related by its ticker. */
export const RELATED_SOURCES: ReadonlySet<SourceName> = new Set(['events', 'reports', 'runs']);

/** The event an entity belongs to: events by key, reports (`<venue>/<key>`) and runs by their `event_ticker`. */
export function eventTickerOf(source: SourceName, key: string, data: Snapshot): string | undefined {
  if (source === 'events') return key;
  if (source === 'reports' || source === 'runs') {
    const ticker = data.event_ticker;
    if (typeof ticker === 'string' && ticker !== '') return ticker;
    if (source === 'reports') return key.slice(key.indexOf('/') + 1) || undefined;
  }
  return undefined;
}

/** The sources a rule's `unless` entries read besides the entity's own snapshot. */
export function unlessSources(rule: Rule): SourceName[] {
  return [...new Set((rule.unless ?? []).flatMap((entry) => (entry.source === undefined ? [] : [entry.source])))];
}

/**
 * The first `unless` entry of `rule` that holds, or undefined: an entry without `source` is a
 * filter on the entity's own current snapshot; with one, on the same event's latest snapshot in
 * that source (an entry whose source has no such snapshot does not hold).
 */
export function inhibitedBy(rule: Rule, entity: string, current: Snapshot, related: RelatedSnapshots | undefined): Inhibition | undefined {
  const entries = rule.unless ?? [];
  for (let entry = 0; entry < entries.length; entry++) {
    const judged = unlessSnapshot(rule, entry, entity, current, related);
    if (judged !== undefined && matchesFilter(entries[entry]!.filter, judged.data)) return { entry, source: judged.source, entity: judged.key };
  }
  return undefined;
}

/**
 * The snapshot `unless` entry `entry` of `rule` is judged on: the entity's own current one for an
 * entry without `source`, else the same event's latest in that source; undefined when none is stored.
 */
export function unlessSnapshot(
  rule: Rule,
  entry: number,
  entity: string,
  current: Snapshot,
  related: RelatedSnapshots | undefined,
): { source: SourceName; key: string; data: Snapshot } | undefined {
  const source = rule.unless?.[entry]?.source;
  if (source === undefined) return { source: rule.source, key: entity, data: current };
  const other = related?.get(source);
  return other && { source, key: other.key, data: other.data };
}
