// Rehearsal (`backtest`, `test`): snapshots replayed through the live cycle's own per-page ingest
// (the planner, rule memory, cooldown, filters, re-arm) and its judgement of due timers (dwell,
// overdue), on a throwaway in-memory store, so that nothing is sent and no stored state changes.
import type { Alert, SnapshotItem, SourceName } from '../core/types.ts';
import type { Rule } from '../rules/index.ts';
import { openStore } from '../store/index.ts';
import { evaluateTimers, ingestItems } from './cycle.ts';

/** What one replayed poll fired: the alerts that would be sent, and those an `unless` entry inhibited. */
export interface ReplayedPoll {
  alerts: Alert[];
  inhibited: Alert[];
}

export interface Replay {
  /**
   * One poll of `source` at `now` that brings `items`: the page, then (after the baseline) the due
   * timers of its entities, as the live cycle judges them after a source's pages. Only the page's
   * entities' timers: a backtest replays each event's history on its own clock.
   */
  poll(source: SourceName, items: readonly SnapshotItem[], rules: readonly Rule[], now: Date, baseline: boolean): Promise<ReplayedPoll>;
  close(): Promise<void>;
}

export async function openReplay(): Promise<Replay> {
  const store = await openStore(':memory:');
  // One connection: polls are applied one after the other, never in interleaved transactions.
  let queue: Promise<unknown> = Promise.resolve();
  const replayPoll = async (source: SourceName, items: readonly SnapshotItem[], rules: readonly Rule[], now: Date, baseline: boolean): Promise<ReplayedPoll> => {
    const ingested = await ingestItems(store, source, items, rules, now, { baseline });
    const timers = baseline ? { alerts: [], inhibited: [] } : await evaluateTimers(store, source, rules, now, { keys: items.map((item) => item.key) });
    const inhibited = new Set([...ingested.inhibited, ...timers.inhibited]);
    const all = [...ingested.alerts, ...timers.alerts];
    return { alerts: all.filter((alert) => !inhibited.has(alert.id)), inhibited: all.filter((alert) => inhibited.has(alert.id)) };
  };
  return {
    poll(...args) {
      const next = queue.then(() => replayPoll(...args));
      queue = next.catch(() => undefined);
      return next;
    },
    close: () => store.close(),
  };
}
