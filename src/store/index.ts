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
  alertExists,
  alertsPerHour,
  lastFiredByRule,
  getMeta,
  setMeta,
} from './repositories.ts';
export type { AlertFilter, AlertListing } from './repositories.ts';
export { alertsOnEntity, entityCounts, entityHistory, entityRuleStates, getEntity } from './entities.ts';
export type { StoredVersion } from './entities.ts';
export { applyPlan, latestSnapshots, loadPlanInputs, pruneSnapshots } from './snapshots.ts';
export { claimSends, closeDigestBatch, digestAlerts, dueSends, openDigestBatches, outboxDepth, settleSends } from './outbox.ts';
export type { OpenBatch, Send, Settlement } from './outbox.ts';
