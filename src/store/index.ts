export { openStore, describeStore, isPostgresUrl, MIGRATIONS_DIR } from './connection.ts';
export type { Store, OpenStoreOptions, StoreKind } from './connection.ts';
export { checkDatabase, giveUpLeadership, leadSource, ledSources } from './leadership.ts';
export type * from './schema.ts';
export {
  getSourceState,
  listSourceStates,
  reportCandidates,
  markPollSuccess,
  markPollError,
  insertRun,
  listRuns,
  listAlerts,
  lastFiredByRule,
  getMeta,
  setMeta,
} from './repositories.ts';
export type { AlertListing } from './repositories.ts';
export { applyPlan, latestSnapshots, loadPlanInputs, pruneSnapshots } from './snapshots.ts';
export { claimSends, closeDigestBatch, digestAlerts, dueSends, openDigestBatches, outboxDepth, settleSends } from './outbox.ts';
export type { OpenBatch, Send, Settlement } from './outbox.ts';
