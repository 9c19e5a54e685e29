export { openStore, migrateToLatest, MIGRATIONS_DIR } from './connection.ts';
export type { Store, OpenStoreOptions } from './connection.ts';
export { hotStatements, ALERT_CURRENT } from './statements.ts';
export type { HotStatements } from './statements.ts';
export type * from './schema.ts';
export {
  getSourceState,
  listSourceStates,
  reportCandidates,
  markPollSuccess,
  markPollError,
  insertRun,
  listRuns,
  updateRunStatus,
  listAlerts,
  getMeta,
  setMeta,
} from './repositories.ts';
export type { AlertListing } from './repositories.ts';
export { applyPlan, latestSnapshots, loadPlanInputs, pruneSnapshots } from './snapshots.ts';
export type { PlanInputs } from './snapshots.ts';
