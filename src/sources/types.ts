// What the sources need from the research API and from stored state, declared here by the code
// that uses it, and the pages they yield.
import type { PageMemory, ReportCandidate, Snapshot, SnapshotItem, SourceName } from '../core/types.ts';
import type { Rule } from '../rules/index.ts';

export interface Page<T> {
  rows: T[];
}

type Row = Record<string, unknown>;

export interface ResearchApi {
  eventPages(params?: { limit?: number; includeEligibility?: boolean }): AsyncIterable<Page<Row & { event_ticker: string; captured_at: string; edge_pp: number | null }>>;
  event(ticker: string): Promise<Row & { venue: string; slug?: string | null; event_ticker: string }>;
  trust(venue: string, key: string): Promise<Row & { run_id: string; title?: string | null; trust_index: { score: number; label: string } }>;
  report(venue: string, key: string): Promise<Row & { title?: string | null; name?: string | null; trust_label?: string | null; trust_score?: number | null }>;
  runStatus(runId: string): Promise<Row & { run_id: string; status: string; venue: string; event_ticker?: string | null; requested_url?: string | null }>;
  startGeneration(venue: string, key: string): Promise<Row & { run_id: string; status: string; event_ticker: string; venue: string }>;
  kpiPages(params?: { status?: 'all' | 'active' | 'settled' | 'reported'; limit?: number }): AsyncIterable<Page<Row & { id: string }>>;
  kpi(eventId: string): Promise<Row>;
  // The market-search endpoints take a rule's query as written (parse.ts checks it against the
  // client's own parameter schemas).
  edge(tickers: readonly string[]): Promise<{ data: Array<Row & { input_ticker: string }> }>;
  marketsWithEdgePages(query: Query): AsyncIterable<Page<Row & { event_ticker: string }> & { hasMore: boolean }>;
  marketPages(query: Query): AsyncIterable<Page<Row & { market_ticker: string }> & { hasMore: boolean }>;
  similarMarkets(query: Query): Promise<{ data: Array<Row & { market_ticker: string }> }>;
  clusterPeers(marketTicker: string, query: Query): Promise<{ data: Array<Row & { market_ticker: string }> }>;
  basketBacktest(body: BasketBacktestRequest): Promise<Row & { summary: Row }>;
  basketValidate(body: BasketValidateRequest): Promise<Row & { warnings: string[]; calendar_clashes: unknown[]; duplicate_underliers: unknown[] }>;
}

/** A rule's `query`: the endpoint's parameters, as written. */
type Query = Readonly<Record<string, unknown>>;

interface BasketLegRequest {
  market_ticker: string;
  side?: 'yes' | 'no';
  stake_usd: number;
}

export interface BasketBacktestRequest {
  market_tickers: string[];
  weights?: number[];
  timeframe?: '1w' | '1m' | '3m' | '6m' | '1y';
}

export interface BasketValidateRequest {
  legs: BasketLegRequest[];
  bankroll_usd?: number;
  max_pairwise_correlation?: number;
}

/** kpis: the stored snapshots of rows with an actual, to carry their `detail` forward. */
export interface SnapshotReader {
  latestSnapshots(source: SourceName, keys: readonly string[]): Promise<Map<string, Snapshot>>;
}

/** reports: the events whose reports may be checked, least recently checked first. */
export interface ReportCandidates {
  reportCandidates(): AsyncIterable<ReportCandidate>;
}

/** runs: the generation runs recorded by `generate` that are still processing. */
export interface ProcessingRuns {
  processingRuns(): Promise<Array<{ run_id: string; event_key: string; status: string }>>;
}

/** Market-search sources: what each feed stored, and which feeds completed a poll (no baseline any more). */
export interface FeedState {
  feedSnapshots(feed: string): Promise<Map<string, Snapshot>>;
  polledFeeds(feeds: readonly string[]): Promise<Set<string>>;
}

export interface FetchContext {
  api: ResearchApi;
  /** The rules of the source being polled. */
  rules: readonly Rule[];
  now: () => Date;
  /** What the source reads of stored state. */
  stored: SnapshotReader & ReportCandidates & ProcessingRuns & FeedState;
  /** The source's first poll (events, kpis): it stores what it sees and fires nothing. */
  baseline: boolean;
  /** events: the newest captured_at of the last complete poll. */
  watermark: string | null;
  /** reports: trust requests allowed per poll. */
  reportsBudget: number;
}

/**
 * Market-search sources: the share of a poll that one query, watchlist or basket makes, judged by
 * the rules that name it.
 */
export interface Feed {
  /** Where its entities are stored (Plan.feed); undefined: under the source. */
  key?: string;
  rules: readonly Rule[];
}

/** One page of a source's poll: its snapshots, and what the source learned with them. */
export interface SourcePage extends PageMemory {
  items: SnapshotItem[];
  /** events: the watermark once every page of this poll is stored (the newest captured_at so far). */
  watermark?: string | null;
  /** Market-search sources: the feed these items belong to; without one, the source's rules judge them. */
  feed?: Feed;
  /** What the poll should report that is no failure (data not synced yet, a query over its page budget). */
  notices?: string[];
}

/** A source's pages; `idle` when it has nothing to poll (reports with no rule, runs with none processing). */
export type SourcePages = AsyncIterable<SourcePage> | 'idle';

/** The API's code of a thrown ApiError (or any error with a `code`), without depending on the class. */
export function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** The HTTP status of a thrown ApiError (or any error with a numeric `status`). */
export function errorStatus(error: unknown): number | undefined {
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === 'number' ? status : undefined;
}

/** The call's result, or undefined when the API answers 404: it does not know the thing (any more). */
export async function unlessNotFound<T>(call: Promise<T>): Promise<T | undefined> {
  try {
    return await call;
  } catch (error) {
    if (errorStatus(error) === 404) return undefined;
    throw error;
  }
}
