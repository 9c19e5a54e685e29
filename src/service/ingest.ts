// Stores one page of snapshots and the alerts they cause, in one transaction: the snapshot, the
// rules' memory and the alerts with their deliveries commit together or not at all.
import type { Alert, Rule, RuleState, Snapshot, SourceName } from '../core/types.ts';
import { evaluate } from '../rules/index.ts';
import type { Store } from '../store/index.ts';
import { hotStatements } from '../store/index.ts';
import { alertId, causeKey } from '../core/alert-id.ts';

export interface SnapshotItem {
  key: string;
  data: Snapshot;
  /** This entity's first sighting is its baseline (reports: the first trust check). */
  baseline?: boolean;
}

export interface IngestOptions {
  source: SourceName;
  /** The rules of this source. */
  rules: readonly Rule[];
  /** The source's first poll: store, fire nothing. */
  baseline: boolean;
  now: Date;
  /** Evaluate, then roll everything back. */
  dryRun?: boolean;
}

export interface IngestResult {
  alerts: Alert[];
  changed: number;
}

class DryRunRollback extends Error {}

export function ingestPage(store: Store, items: readonly SnapshotItem[], options: IngestOptions): IngestResult {
  const st = hotStatements(store.raw);
  const { source, rules, now } = options;
  const nowIso = now.toISOString();
  // Whole seconds, as the webhook contract writes fired_at; stored times keep milliseconds for ordering.
  const firedAt = nowIso.replace(/\.\d{3}Z$/, 'Z');
  const result: IngestResult = { alerts: [], changed: 0 };

  const write = store.raw.transaction(() => {
    for (const item of items) {
      const text = JSON.stringify(item.data);
      const prevRow = st.getEntity.get(source, item.key);
      if (prevRow?.data === text) continue;
      const seq = (prevRow?.seq ?? 0) + 1;
      // The latest snapshot lives in `entities`; `snapshots` keeps the ones it superseded, so a
      // baseline writes each snapshot once.
      if (prevRow) st.insertSnapshot.run(source, item.key, prevRow.seq, prevRow.data, prevRow.updated_at);
      st.upsertEntity.run(source, item.key, seq, text, nowIso, nowIso);
      result.changed++;
      if (options.baseline || (item.baseline && !prevRow) || rules.length === 0) continue;

      const prev = prevRow ? (JSON.parse(prevRow.data) as Snapshot) : undefined;
      const stored = new Map<string, RuleState>();
      for (const row of st.getRuleStates.all(source, item.key)) {
        stored.set(row.rule, { armed: row.armed === 1, lastFiredAt: row.last_fired_at });
      }
      for (const rule of rules) {
        const before = stored.get(rule.name);
        const outcome = evaluate(rule, prev, item.data, before, now);
        const after = outcome.state;
        // An absent memory is derived again from the stored snapshot, so only a memory that
        // differs from that derivation (disarmed, or with a firing time) needs a row.
        const needsRow = before
          ? before.armed !== after.armed || before.lastFiredAt !== after.lastFiredAt
          : !after.armed || after.lastFiredAt !== null;
        if (needsRow) st.upsertRuleState.run(rule.name, source, item.key, after.armed ? 1 : 0, after.lastFiredAt);
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
        const inserted = st.insertAlert.run(
          alert.id,
          alert.rule,
          alert.severity,
          source,
          alert.entity,
          alert.trigger,
          firedAt,
          alert.summary,
          JSON.stringify(alert.changes),
          seq,
        );
        if (inserted.changes === 0) continue;
        for (const channel of rule.notify) {
          // Digest deliveries wait in their rule's open batch; the digest worker sends them.
          const status = rule.digest ? 'digest' : 'pending';
          st.insertDelivery.run(alert.id, channel, status, null, rule.digest ? null : nowIso, nowIso);
        }
        result.alerts.push(alert);
      }
    }
    if (options.dryRun) throw new DryRunRollback();
  });

  try {
    write.immediate();
  } catch (error) {
    if (!(error instanceof DryRunRollback)) throw error;
  }
  return result;
}
