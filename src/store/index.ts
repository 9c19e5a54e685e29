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
  recordSourceHealth,
  takeAgentQuestion,
  saveExplanation,
  insertSilence,
  activeSilences,
  silencesEndingAfter,
  expireSilence,
} from './repositories.ts';
export type { AlertFilter, AlertListing } from './repositories.ts';
export { alertsOnEntity, entityCounts, entityHistory, entityRuleStates, getEntity } from './entities.ts';
export type { StoredVersion } from './entities.ts';
export { applyPlan, dueTimers, feedSnapshots, latestSnapshots, loadPlanInputs, pendingDwell, polledFeeds, pruneSnapshots, relatedSnapshots } from './snapshots.ts';
export type { PlanInputOptions, PlanInputs } from './snapshots.ts';
export { claimSends, closeDigestBatch, digestAlerts, dueSends, markSilenced, openDigestBatches, outboxDepth, settleSends, unsentDeliveries } from './outbox.ts';
export type { AlertDelivery, OpenBatch, Send, Settlement, UnsentDelivery } from './outbox.ts';
