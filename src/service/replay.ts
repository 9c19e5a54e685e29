// Rehearsal (`backtest`, `test`): snapshots replayed through the live cycle's own per-page ingest
// (the planner, rule memory, cooldown, filters, re-arm) on a throwaway in-memory store, so that
// nothing is sent and no stored state changes.
import type { Alert, SnapshotItem, SourceName } from '../core/types.ts';
import type { Rule } from '../rules/index.ts';
import { openStore } from '../store/index.ts';
import { ingestItems } from './cycle.ts';

export interface Replay {
  /** One page, as one poll of `source` at `now` would bring it; returns the alerts it fired. */
  page(source: SourceName, items: readonly SnapshotItem[], rules: readonly Rule[], now: Date, baseline: boolean): Promise<Alert[]>;
  close(): Promise<void>;
}

export async function openReplay(): Promise<Replay> {
  const store = await openStore(':memory:');
  // One connection: pages are applied one after the other, never in interleaved transactions.
  let queue: Promise<unknown> = Promise.resolve();
  return {
    page(source, items, rules, now, baseline) {
      const next = queue.then(async () => (await ingestItems(store, source, items, rules, now, { baseline })).alerts);
      queue = next.catch(() => undefined);
      return next;
    },
    close: () => store.close(),
  };
}
