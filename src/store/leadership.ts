// Repository functions over the store's cluster (cluster.ts): one poller per source, and whether
// the database answers.
import type { SourceName } from '../core/types.ts';
import { clusterOf, type Store } from './connection.ts';

/** Whether this process polls `source` now: it takes or keeps its lead, unless another process holds it. */
export function leadSource(store: Store, source: SourceName, now: Date): Promise<boolean> {
  return clusterOf(store).lead(source, now);
}

/** The sources this process leads, each with since when. */
export function ledSources(store: Store): ReadonlyMap<string, Date> {
  return clusterOf(store).led();
}

/** Gives up every source this process leads (its database connection was lost), for others to take. */
export function giveUpLeadership(store: Store): Promise<void> {
  return clusterOf(store).giveUp();
}

/** Resolves when the database answers; throws (naming where it is, never a password) otherwise. */
export function checkDatabase(store: Store): Promise<void> {
  return clusterOf(store).check();
}
