// The poll cycle, the only loop over sources and pages: a source fetches a page (sources/), the
// store loads what the planner needs, the planner decides (rules/plan.ts), the store applies the
// plan in one transaction; once every page is in, the poll is marked. A failing source does not
// stop the others. The daemon and `poll --once` both run it.
import { describeError } from '../core/errors.ts';
import type { Alert, PageMemory, SnapshotItem, SourceName } from '../core/types.ts';
import type { Rule } from '../rules/index.ts';
import { SOURCES } from '../core/types.ts';
import { plan } from '../rules/index.ts';
import { errorStatus, fetchEvents, fetchKpis, fetchReports, fetchRuns, type FetchContext, type ResearchApi, type SourcePages } from '../sources/index.ts';
import {
  applyPlan,
  getSourceState,
  latestSnapshots,
  leadSource,
  listRuns,
  loadPlanInputs,
  markPollError,
  markPollSuccess,
  pruneSnapshots,
  reportCandidates,
  type Store,
} from '../store/index.ts';

/**
 * The order of one cycle, written once: reports are chosen from the events' latest snapshots, so
 * they follow the events poll; the chains run side by side.
 */
export const POLL_ORDER: ReadonlyArray<readonly SourceName[]> = [['events', 'reports'], ['kpis'], ['runs']];

/** Runs `poll` for every source in the cycle's order. */
export async function inPollOrder(poll: (source: SourceName) => Promise<void>): Promise<void> {
  await Promise.all(
    POLL_ORDER.map(async (chain) => {
      for (const source of chain) await poll(source);
    }),
  );
}

const FETCHERS: Record<SourceName, (ctx: FetchContext) => SourcePages | Promise<SourcePages>> = {
  events: fetchEvents,
  kpis: fetchKpis,
  reports: fetchReports,
  runs: fetchRuns,
};

/** Sources whose first poll is a baseline; reports and runs judge each entity's first sighting instead. */
const BASELINE_SOURCES: ReadonlySet<SourceName> = new Set(['events', 'kpis']);

export interface IngestOptions {
  /** The source's first poll: store, fire nothing. */
  baseline: boolean;
  /** Plan only: the plan's alerts are reported, nothing is written. */
  dryRun?: boolean;
  /** What the source learned with these items, stored in the same transaction. */
  remembered?: PageMemory;
}

export interface IngestResult {
  /** The alerts stored now (dry run: that would be). */
  alerts: Alert[];
  /** Entities whose snapshot changed (or appeared). */
  changed: number;
}

/** One page: load what the planner needs, plan, apply. `rules` are those of `source`. */
export async function ingestItems(
  store: Store,
  source: SourceName,
  items: readonly SnapshotItem[],
  rules: readonly Rule[],
  now: Date,
  options: IngestOptions,
): Promise<IngestResult> {
  const planned = plan({
    source,
    items,
    rules,
    now,
    baseline: options.baseline,
    // Not kept in a variable: the stored snapshots (text) can be collected while the plan is applied.
    ...(await loadPlanInputs(store, source, items.map((item) => item.key), { memory: !options.baseline && rules.length > 0 })),
  });
  const alerts = planned.alerts.map(({ alert }) => alert);
  const changed = planned.snapshots.length;
  const remembered = options.remembered ?? {};
  const nothingLearned = !remembered.reportChecks?.length && !remembered.runStatuses?.length;
  if (options.dryRun || (changed === 0 && nothingLearned)) return { alerts, changed };
  const stored = await applyPlan(store, planned, remembered);
  return { alerts: alerts.filter((alert) => stored.has(alert.id)), changed };
}

export interface PollSourcesOptions {
  store: Store;
  api: ResearchApi;
  rules: readonly Rule[];
  now: () => Date;
  dryRun?: boolean;
  reportsBudget: number;
  /** Which sources to poll; default all. */
  sources?: readonly SourceName[];
  snapshotRetentionMs?: number;
  /** `status`: the HTTP status of the API's answer that failed the poll, when there was one. */
  onPoll?: (event: { source: SourceName; ok: boolean; durationMs: number; error?: string; status?: number; result?: PollResult }) => void;
}

export interface PollResult {
  source: SourceName;
  alerts: Alert[];
  /** Entities whose snapshot changed (or appeared). */
  changed: number;
  /** Nothing to poll (reports with no rule, runs with none processing), or another process polls it. */
  skipped?: boolean;
  /** Another process sharing the database polls this source now (it leads it). */
  ledElsewhere?: boolean;
  /** The source's first poll: it stored what it saw and fired nothing. */
  baseline?: boolean;
}

export interface SourceFailure {
  source: SourceName;
  error: string;
}

export interface PollSourcesReport {
  results: PollResult[];
  failures: SourceFailure[];
  alerts: Alert[];
}

/** What the sources read of stored state, from the store. */
function storedState(store: Store): FetchContext['stored'] {
  return {
    latestSnapshots: (source, keys) => latestSnapshots(store, source, keys),
    reportCandidates: () => reportCandidates(store),
    processingRuns: () => listRuns(store, { status: 'processing' }),
  };
}

/**
 * One source's poll, page by page, each page in its own transaction. A failure stops it where
 * it is: the pages stored stay, the watermark does not move and the poll is not marked good.
 */
async function pollSource(source: SourceName, options: PollSourcesOptions): Promise<PollResult> {
  const { store, dryRun = false } = options;
  // One poller per source among the processes sharing the database (a dry run writes nothing).
  if (!dryRun && !(await leadSource(store, source, options.now()))) return { source, alerts: [], changed: 0, skipped: true, ledElsewhere: true };
  const state = await getSourceState(store, source);
  const baseline = BASELINE_SOURCES.has(source) && !state?.baseline_at;
  const rules = options.rules.filter((rule) => rule.source === source);
  const result: PollResult = { source, alerts: [], changed: 0, ...(BASELINE_SOURCES.has(source) ? { baseline } : {}) };
  const pages = await FETCHERS[source]({
    api: options.api,
    rules,
    now: options.now,
    stored: storedState(store),
    baseline,
    watermark: state?.watermark ?? null,
    reportsBudget: options.reportsBudget,
  });
  if (pages === 'idle') return { ...result, skipped: true };
  let watermark: string | null | undefined;
  for await (const { items, watermark: pageWatermark, ...remembered } of pages) {
    const ingested = await ingestItems(store, source, items, rules, options.now(), { baseline, dryRun, remembered });
    result.alerts.push(...ingested.alerts);
    result.changed += ingested.changed;
    if (pageWatermark !== undefined) watermark = pageWatermark;
  }
  if (!dryRun) await markPollSuccess(store, source, options.now(), watermark === undefined ? {} : { watermark });
  return result;
}

export async function pollSources(options: PollSourcesOptions): Promise<PollSourcesReport> {
  const wanted = new Set(options.sources ?? SOURCES);
  const report: PollSourcesReport = { results: [], failures: [], alerts: [] };

  const pollOne = async (source: SourceName): Promise<void> => {
    if (!wanted.has(source)) return;
    const started = Date.now();
    try {
      const result = await pollSource(source, options);
      report.results.push(result);
      report.alerts.push(...result.alerts);
      options.onPoll?.({ source, ok: true, durationMs: Date.now() - started, result });
    } catch (error) {
      let message = describeError(error);
      if (!options.dryRun) {
        try {
          await markPollError(options.store, source, options.now(), message);
        } catch (recordError) {
          // The database itself is failing (locked, disk full): the failure is still reported.
          message += ` (not recorded: ${describeError(recordError)})`;
        }
      }
      report.failures.push({ source, error: message });
      const status = errorStatus(error);
      options.onPoll?.({ source, ok: false, durationMs: Date.now() - started, error: message, ...(status === undefined ? {} : { status }) });
    }
  };

  await inPollOrder(pollOne);
  if (!options.dryRun && options.snapshotRetentionMs !== undefined) {
    try {
      await pruneSnapshots(options.store, new Date(options.now().getTime() - options.snapshotRetentionMs));
    } catch {
      // Housekeeping only: a locked or full database is retried by the next cycle's pruning.
    }
  }
  return report;
}
