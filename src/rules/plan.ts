// The planner: what one page of snapshots does to the stored state. Pure: it takes everything it
// judges by (the stored snapshots and rule memory of the page's entities, the rules, the time)
// and returns the writes, which the store applies in one transaction.
import { alertId, causeKey } from '../core/alert-id.ts';
import type { EntityMemory, Plan, StoredSnapshot, MemoryWrite } from '../core/plan.ts';
import type { Alert, RuleState, Snapshot, SnapshotItem, SourceName } from '../core/types.ts';
import { evaluate } from './evaluate.ts';
import type { Rule } from './schema.ts';

/** Everything `plan` judges by. Maps are keyed by entity key and hold the page's entities only. */
export interface PlanInput {
  source: SourceName;
  /** Where the items are stored when not under `source` (Plan.feed). */
  feed?: string;
  items: readonly SnapshotItem[];
  previous: ReadonlyMap<string, StoredSnapshot>;
  memory: ReadonlyMap<string, EntityMemory>;
  /** The rules of this source. */
  rules: readonly Rule[];
  now: Date;
  /** The source's first poll: store what it sees, fire nothing. */
  baseline: boolean;
}


/**
 * Plans one page. An item whose serialized snapshot equals the entity's latest changes nothing;
 * a changed one gets the next `seq` and, unless it is a baseline, is judged by every rule.
 */
export function plan(input: PlanInput): Plan {
  const { source, rules, now } = input;
  const at = now.toISOString();
  // Whole seconds, as the webhook contract writes fired_at; stored times keep milliseconds for ordering.
  const firedAt = at.replace(/\.\d{3}Z$/, 'Z');
  const result: Plan = { source, ...(input.feed === undefined ? {} : { feed: input.feed }), at, snapshots: [], memory: [], alerts: [], deliveries: [] };
  // What this page has planned so far, so that an entity listed twice is judged against its own
  // earlier write, as if the page were applied item by item.
  const latest = new Map<string, StoredSnapshot>();
  const remembered = new Map<string, Map<string, RuleState>>();
  const memoryWrites = new Map<string, MemoryWrite>();

  for (const item of input.items) {
    const text = JSON.stringify(item.data);
    const prev = latest.get(item.key) ?? input.previous.get(item.key);
    if (prev?.text === text) continue;
    const seq = (prev?.seq ?? 0) + 1;
    latest.set(item.key, { seq, text });
    result.snapshots.push({ key: item.key, seq, text });
    if (input.baseline || (item.baseline && !prev) || rules.length === 0) continue;

    const prevData = prev ? (JSON.parse(prev.text) as Snapshot) : undefined;
    const stored = remembered.get(item.key) ?? new Map(input.memory.get(item.key));
    remembered.set(item.key, stored);
    for (const rule of rules) {
      const before = stored.get(rule.name);
      const outcome = evaluate(rule, prevData, item.data, before, now);
      const after = outcome.state;
      // An absent memory is derived again from the stored snapshot, so only a memory that
      // differs from that derivation (disarmed, or with a firing time) needs a row.
      const needsRow = before
        ? before.armed !== after.armed || before.lastFiredAt !== after.lastFiredAt
        : !after.armed || after.lastFiredAt !== null;
      if (needsRow) {
        stored.set(rule.name, after);
        memoryWrites.set(`${rule.name}\u0000${item.key}`, { rule: rule.name, key: item.key, state: after });
      }
      if (!outcome.fired) continue;

      const alert: Alert = {
        id: alertId(causeKey(rule.name, source, item.key, seq)),
        rule: rule.name,
        severity: rule.severity,
        source,
        entity: item.key,
        trigger: rule.trigger.type,
        fired_at: firedAt,
        summary: outcome.summary,
        changes: outcome.changes,
        current: item.data,
      };
      result.alerts.push({ alert, seq });
      for (const channel of rule.notify) {
        result.deliveries.push({ alertId: alert.id, channel, status: rule.digest ? 'digest' : 'pending' });
      }
    }
  }
  result.memory = [...memoryWrites.values()];
  return result;
}
