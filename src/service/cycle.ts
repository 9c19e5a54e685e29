// The poll cycle, the only loop over sources and pages: a source fetches a page (sources/), the
// store loads what the planner needs, the planner decides (rules/plan.ts), the store applies the
// plan in one transaction; once every page is in, the poll is marked. A failing source does not
// stop the others. The daemon and `poll --once` both run it.
import { noticeId } from '../core/alert-id.ts';
import { describeError } from '../core/errors.ts';
import type { Plan } from '../core/plan.ts';
import type { Alert, PageMemory, SnapshotItem, SourceName } from '../core/types.ts';
import type { HealthSettings, Rule } from '../rules/index.ts';
import { SOURCES } from '../core/types.ts';
import { eventTickerOf, plan, planTimers, unlessSources } from '../rules/index.ts';
import {
  errorStatus,
  fetchBaskets,
  fetchEdge,
  fetchEvents,
  fetchKpis,
  fetchMarkets,
  fetchRankings,
  fetchReports,
  fetchRuns,
  fetchSimilar,
  type FetchContext,
  type ResearchApi,
  type SourcePages,
} from '../sources/index.ts';
import {
  applyPlan,
  dueTimers,
  feedSnapshots,
  getSourceState,
  latestSnapshots,
  leadSource,
  listRuns,
  loadPlanInputs,
  markPollError,
  markPollSuccess,
  polledFeeds,
  pruneSnapshots,
  recordSourceHealth,
  relatedSnapshots,
  reportCandidates,
  type Store,
} from '../store/index.ts';
import { isKeyRefused } from './health.ts';

/**
 * The order of one cycle, written once: reports are chosen from the events' latest snapshots, so
 * they follow the events poll; the chains run side by side. The market-search sources read
 * nothing of the others, one chain each.
 */
export const POLL_ORDER: ReadonlyArray<readonly SourceName[]> = [['events', 'reports'], ['kpis'], ['runs'], ['edge'], ['rankings'], ['markets'], ['similar'], ['baskets']];

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
  edge: fetchEdge,
  rankings: fetchRankings,
  markets: fetchMarkets,
  similar: fetchSimilar,
  baskets: fetchBaskets,
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
  /** A market-search feed the items are stored under, instead of the source (Plan.feed). */
  feed?: string;
  /** The time stored with what is written (PlanInput.at); `now` when absent. */
  at?: Date;
}

export interface IngestResult {
  /** The alerts stored now (dry run: that would be). */
  alerts: Alert[];
  /** The ids of those alerts that an `unless` entry inhibited (recorded, never sent). */
  inhibited: string[];
  /** Entities whose snapshot changed (or appeared). */
  changed: number;
}

/** What of the stored state the rules of a source need beyond the snapshots and memory. */
function needs(rules: readonly Rule[]): { timers: boolean; openOf: string[]; related: SourceName[] } {
  return {
    timers: rules.some((rule) => rule.forMs !== undefined || rule.trigger.type === 'overdue'),
    openOf: rules.filter((rule) => rule.resolve).map((rule) => rule.name),
    related: [...new Set(rules.flatMap(unlessSources))],
  };
}

/** The same event's latest snapshots in the sources `unless` entries read, for the given entities. */
async function relatedOf(store: Store, source: SourceName, entities: ReadonlyArray<{ key: string; data: Record<string, unknown> }>, sources: readonly SourceName[]) {
  if (sources.length === 0 || entities.length === 0) return undefined;
  const tickers = new Map<string, string>();
  for (const { key, data } of entities) {
    const ticker = eventTickerOf(source, key, data);
    if (ticker !== undefined) tickers.set(key, ticker);
  }
  return relatedSnapshots(store, tickers, sources);
}

/** The plan's alerts that were stored (dry run: all of them), and the ids of those inhibited. */
function plannedAlerts(planned: Plan, stored?: ReadonlySet<string>): Pick<IngestResult, 'alerts' | 'inhibited'> {
  const kept = stored === undefined ? planned.alerts : planned.alerts.filter(({ alert }) => stored.has(alert.id));
  return { alerts: kept.map(({ alert }) => alert), inhibited: kept.filter((planned) => planned.inhibitedBy !== undefined).map(({ alert }) => alert.id) };
}

/** Whether applying a plan writes anything. */
function writesAnything(planned: Plan, remembered: PageMemory): boolean {
  return (
    planned.snapshots.length > 0 ||
    planned.alerts.length > 0 ||
    (planned.timers?.length ?? 0) > 0 ||
    (planned.clearedTimers?.length ?? 0) > 0 ||
    (planned.resolutions?.length ?? 0) > 0 ||
    (remembered.reportChecks?.length ?? 0) > 0 ||
    (remembered.runStatuses?.length ?? 0) > 0 ||
    (remembered.polledFeeds?.length ?? 0) > 0
  );
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
  const need = needs(rules);
  const judging = !options.baseline && rules.length > 0;
  const planned = plan({
    source,
    ...(options.feed === undefined ? {} : { feed: options.feed }),
    items,
    rules,
    now,
    ...(options.at === undefined ? {} : { at: options.at }),
    baseline: options.baseline,
    related: judging ? await relatedOf(store, source, items, need.related) : undefined,
    // Not kept in a variable: the stored snapshots (text) can be collected while the plan is applied.
    ...(await loadPlanInputs(store, options.feed ?? source, items.map((item) => item.key), { memory: judging, timers: need.timers, openOf: judging ? need.openOf : [] })),
  });
  const changed = planned.snapshots.length;
  const remembered = options.remembered ?? {};
  if (options.dryRun || !writesAnything(planned, remembered)) return { ...plannedAlerts(planned), changed };
  return { ...plannedAlerts(planned, await applyPlan(store, planned, remembered)), changed };
}

/**
 * The source's timers whose time has come (dwells complete, due dates passed), judged on each
 * entity's latest stored snapshot, whether or not this poll changed it. Only the due timers are
 * read, by the due-time index. Returns the alerts stored now (dry run: that would be). `keys`: the
 * timers of these entities only (a replay judges each entity's history on its own clock).
 */
export async function evaluateTimers(
  store: Store,
  source: SourceName,
  rules: readonly Rule[],
  now: Date,
  options: { dryRun?: boolean; feed?: string; at?: Date; keys?: readonly string[] } = {},
): Promise<Pick<IngestResult, 'alerts' | 'inhibited'>> {
  const none = { alerts: [], inhibited: [] };
  const need = needs(rules);
  if (!need.timers) return none;
  const { feed, at } = options;
  const due = await dueTimers(store, feed ?? source, now, options.keys === undefined ? {} : { keys: options.keys });
  if (due.length === 0) return none;
  const keys = [...new Set(due.map((timer) => timer.key))];
  const inputs = await loadPlanInputs(store, feed ?? source, keys, { memory: true, openOf: need.openOf });
  const entities = [...inputs.previous].map(([key, stored]) => ({ key, data: JSON.parse(stored.text) as Record<string, unknown> }));
  const planned = planTimers({
    source,
    ...(feed === undefined ? {} : { feed }),
    due,
    latest: inputs.previous,
    memory: inputs.memory,
    open: inputs.open,
    related: await relatedOf(store, source, entities, need.related),
    rules,
    now,
    ...(at === undefined ? {} : { at }),
  });
  if (options.dryRun) return plannedAlerts(planned);
  return plannedAlerts(planned, await applyPlan(store, planned));
}

export interface PollSourcesOptions {
  store: Store;
  api: ResearchApi;
  rules: readonly Rule[];
  /** The clock rules judge by (dwell, due dates, cooldown): the data's (the built-in sandbox's simulated time). */
  now: () => Date;
  /**
   * The clock of what is stored and shown: fired_at, deliveries (the outbox, digests and silences
   * run on it), poll times; `now` when absent (the same outside the built-in sandbox).
   */
  wallNow?: () => Date;
  dryRun?: boolean;
  reportsBudget: number;
  /** Which sources to poll; default all. */
  sources?: readonly SourceName[];
  snapshotRetentionMs?: number;
  /** Source health notices (a rule file's `health`). */
  health?: HealthSettings;
  /** `status`: the HTTP status of the API's answer that failed the poll, when there was one. */
  onPoll?: (event: { source: SourceName; ok: boolean; durationMs: number; error?: string; status?: number; result?: PollResult }) => void;
}

const wallNow = (options: Pick<PollSourcesOptions, 'now' | 'wallNow'>): Date => (options.wallNow ?? options.now)();

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
  /** What the poll reports that is no failure (market-search data not synced yet, a query over its page budget). */
  notices: string[];
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
    feedSnapshots: (feed) => feedSnapshots(store, feed),
    polledFeeds: (feeds) => polledFeeds(store, feeds),
  };
}

/**
 * One source's poll, page by page, each page in its own transaction. A failure stops it where
 * it is: the pages stored stay, the watermark does not move and the poll is not marked good.
 */
async function pollSource(source: SourceName, options: PollSourcesOptions): Promise<PollResult> {
  const { store, dryRun = false } = options;
  // One poller per source among the processes sharing the database (a dry run writes nothing).
  if (!dryRun && !(await leadSource(store, source, options.now()))) return { source, alerts: [], changed: 0, notices: [], skipped: true, ledElsewhere: true };
  const state = await getSourceState(store, source);
  const baseline = BASELINE_SOURCES.has(source) && !state?.baseline_at;
  const rules = options.rules.filter((rule) => rule.source === source);
  const result: PollResult = { source, alerts: [], changed: 0, notices: [], ...(BASELINE_SOURCES.has(source) ? { baseline } : {}) };
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
  // A market-search source's pages belong to feeds, each with its own rules, timers and open alerts.
  const feeds = new Map<string, readonly Rule[]>();
  for await (const { items, watermark: pageWatermark, feed, notices, ...remembered } of pages) {
    if (feed?.key !== undefined) feeds.set(feed.key, feed.rules);
    const ingested = await ingestItems(store, source, items, feed?.rules ?? rules, options.now(), {
      baseline,
      dryRun,
      remembered,
      at: wallNow(options),
      ...(feed?.key === undefined ? {} : { feed: feed.key }),
    });
    result.notices.push(...(notices ?? []));
    result.alerts.push(...ingested.alerts);
    result.changed += ingested.changed;
    if (pageWatermark !== undefined) watermark = pageWatermark;
  }
  // Time-driven rules are judged at every poll of the source, after its pages are in.
  if (!baseline) {
    result.alerts.push(...(await evaluateTimers(store, source, rules, options.now(), { dryRun, at: wallNow(options) })).alerts);
    for (const [feed, feedRules] of feeds) result.alerts.push(...(await evaluateTimers(store, source, feedRules, options.now(), { dryRun, feed, at: wallNow(options) })).alerts);
  }
  if (!dryRun) await markPollSuccess(store, source, wallNow(options), watermark === undefined ? {} : { watermark });
  return result;
}

/** One health notice per change (degraded, then recovered), to the channels of `health`. */
async function noteHealth(options: PollSourcesOptions, source: SourceName, status: 'degraded' | 'recovered', error: string | null): Promise<void> {
  const channels = options.health?.notify ?? [];
  await recordSourceHealth(options.store, { source, status, error, channels, noticeId: (cause) => noticeId(`${source}\u0000${cause}`) }, wallNow(options));
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
      if (options.health && !options.dryRun && !result.skipped) await noteHealth(options, source, 'recovered', null);
      options.onPoll?.({ source, ok: true, durationMs: Date.now() - started, result });
    } catch (error) {
      let message = describeError(error);
      const status = errorStatus(error);
      if (!options.dryRun) {
        try {
          const failures = await markPollError(options.store, source, wallNow(options), message);
          // After `after` failed polls in a row, or at once when the API refuses the key.
          if (options.health && (failures >= options.health.after || isKeyRefused(status))) await noteHealth(options, source, 'degraded', message);
        } catch (recordError) {
          // The database itself is failing (locked, disk full): the failure is still reported.
          message += ` (not recorded: ${describeError(recordError)})`;
        }
      }
      report.failures.push({ source, error: message });
      options.onPoll?.({ source, ok: false, durationMs: Date.now() - started, error: message, ...(status === undefined ? {} : { status }) });
    }
  };

  await inPollOrder(pollOne);
  if (!options.dryRun && options.snapshotRetentionMs !== undefined) {
    try {
      await pruneSnapshots(options.store, new Date(wallNow(options).getTime() - options.snapshotRetentionMs));
    } catch {
      // Housekeeping only: a locked or full database is retried by the next cycle's pruning.
    }
  }
  return report;
}
