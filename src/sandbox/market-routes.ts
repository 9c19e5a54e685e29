// Handlers of api/market-search-and-baskets.md: markets search, similar markets, cluster peers,
// the edge ranking, model edge, basket backtest and validate. They serve the world as of its last
// nightly refresh (markets.ts) and answer 503 while a refresh syncs; errors use `{detail}`. The
// document's vocabulary (sorts, kinds, ranges) is written out here again rather than taken from the
// client's schemas, so that the client's tests against the sandbox check one against the other.
import { z } from 'zod';
import { backtestSummary, navCandles, TIMEFRAME_SPECS, validateBasket, type Timeframe, type ValidationLeg } from './baskets.ts';
import { edgeRow, iso, rankingRow, type SimEvent, type Snapshot } from './events.ts';
import {
  behaviorDistance, buildView, clusterOf, distance, marketRow, marketTitle, marketView, priceAt, scoringRunId, tokens, volume24h,
  type MarketView, type SimMarket,
} from './markets.ts';
import { allowOnly, encodeCursor, intParam, jsonBody, numberParam, offsetCursor, refuse, timeParam, type Reply, type Route } from './params.ts';
import type { SimWorld } from './world.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MIN_TEXT = 3;

/** The current view, or 503 while the nightly sync runs. */
function syncedView(world: SimWorld): MarketView {
  if (world.marketSync().syncing) refuse('detail', 503, 'Search data unavailable: the nightly sync has not completed; try again in a few minutes');
  return marketView(world);
}

/** The view of a scoring run: the current one, or an earlier refresh of the last day. */
function viewOfRun(world: SimWorld, runId: string | undefined): MarketView {
  const current = syncedView(world);
  if (runId === undefined || runId.toLowerCase() === current.runId) return current;
  if (!UUID.test(runId)) refuse('detail', 422, 'run_id must be a UUID');
  const at = world.recentRefreshes().find((t) => scoringRunId(world.seed, t) === runId.toLowerCase());
  if (at === undefined) refuse('detail', 404, `Scoring run ${runId} not found`);
  return buildView(world, at);
}

function shortText(text: string | undefined): void {
  if (text !== undefined && text.length < MIN_TEXT) refuse('detail', 503, `q must be at least ${MIN_TEXT} characters`);
}

function oneOf<T extends string>(values: readonly T[], name: string, value: string | undefined, fallback: T): T {
  if (value === undefined) return fallback;
  if (!values.includes(value as T)) refuse('detail', 400, `${name} must be one of ${values.join(', ')}`);
  return value as T;
}

function page<T>(rows: readonly T[], offset: number, limit: number): { slice: T[]; next_cursor: string | null; has_more: boolean } {
  const hasMore = offset + limit < rows.length;
  return { slice: rows.slice(offset, offset + limit), next_cursor: hasMore ? encodeCursor({ offset: offset + limit }) : null, has_more: hasMore };
}

const byTicker = (a: SimMarket, b: SimMarket): number => (a.ticker < b.ticker ? -1 : a.ticker > b.ticker ? 1 : 0);

// ---- search ----

const MARKET_SORTS = ['volume_24h', 'close_time', 'last_price'] as const;
type MarketSort = (typeof MARKET_SORTS)[number];

interface SearchHit {
  m: SimMarket;
  row: Record<string, unknown>;
  rank: number;
}

const searches = new WeakMap<MarketView, Map<string, SearchHit[]>>();

/**
 * The markets a search matches, in its order: computed once per view and query, so that the
 * pages of one walk cost a slice each (a 50,000-event world has 150,000 markets).
 */
function searchHits(view: MarketView, q: Record<string, string>, sortBy: MarketSort | undefined, minVolume: number, closeBefore: number): SearchHit[] {
  let cache = searches.get(view);
  if (!cache) searches.set(view, (cache = new Map<string, SearchHit[]>()));
  const { cursor: _cursor, limit: _limit, ...filters } = q;
  const key = JSON.stringify(Object.entries(filters).sort());
  const hit = cache.get(key);
  if (hit) return hit;
  const words = q.q === undefined ? [] : [...tokens(q.q)];
  const category = q.category?.toLowerCase();
  const hits: SearchHit[] = [];
  for (const m of view.markets) {
    const ev = m.ev;
    if (category !== undefined && ev.series.category.toLowerCase() !== category) continue;
    if (q.series_ticker !== undefined && ev.series.series !== q.series_ticker) continue;
    if (q.series_prefix !== undefined && !ev.series.series.startsWith(q.series_prefix)) continue;
    if (q.event_ticker !== undefined && ev.ticker.toLowerCase() !== q.event_ticker.toLowerCase()) continue;
    if (ev.close_time > closeBefore) continue;
    const row = marketRow(m, view.refreshedAt);
    if ((row.volume_24h as number) < minVolume) continue;
    const haystack = `${String(row.title)} ${String(row.subtitle)} ${m.ticker}`.toLowerCase();
    const relevance = words.filter((w) => haystack.includes(w)).length;
    if (q.q !== undefined && relevance === 0) continue;
    const boosted = sortBy === undefined && words.length > 0 && q.boost_category?.toLowerCase() === ev.series.category.toLowerCase();
    hits.push({ m, row, rank: relevance + (boosted ? 0.5 : 0) });
  }
  const value = (h: SearchHit): number => {
    if (sortBy === 'close_time') return -h.m.ev.close_time;
    if (sortBy === 'last_price') return h.m.price;
    if (sortBy === undefined && words.length > 0) return h.rank * 1e12 + (h.row.volume_24h as number);
    return h.row.volume_24h as number;
  };
  hits.sort((a, b) => value(b) - value(a) || byTicker(a.m, b.m));
  // Distinct queries are few (one per rule); a client that varies them endlessly starts afresh.
  if (cache.size >= 100) cache.clear();
  cache.set(key, hits);
  return hits;
}

function searchMarkets(world: SimWorld, q: Record<string, string>): Reply {
  allowOnly('detail', q, ['q', 'category', 'series_ticker', 'series_prefix', 'event_ticker', 'close_before', 'min_volume_24h', 'sort_by', 'boost_category', 'limit', 'cursor']);
  const sortBy = q.sort_by === undefined ? undefined : oneOf(MARKET_SORTS, 'sort_by', q.sort_by, 'volume_24h');
  const limit = intParam('detail', q, 'limit', 50, 1, 200, 422);
  const minVolume = numberParam('detail', q, 'min_volume_24h') ?? -Infinity;
  const closeBefore = timeParam('detail', q, 'close_before', 422) ?? Infinity;
  const offset = offsetCursor('detail', q.cursor);
  shortText(q.q);
  const hits = searchHits(syncedView(world), q, sortBy, minVolume, closeBefore);
  const { slice, ...more } = page(hits, offset, limit);
  return { status: 200, body: { data: slice.map((h) => h.row), ...more } };
}

function similarMarkets(world: SimWorld, q: Record<string, string>): Reply {
  allowOnly('detail', q, ['anchor_ticker', 'q', 'top_k', 'category', 'min_volume_24h', 'close_before']);
  if ((q.anchor_ticker === undefined) === (q.q === undefined)) refuse('detail', 400, 'exactly one of anchor_ticker and q is required');
  const topK = intParam('detail', q, 'top_k', 25, 1, 100, 422);
  const minVolume = numberParam('detail', q, 'min_volume_24h') ?? -Infinity;
  const closeBefore = timeParam('detail', q, 'close_before', 422) ?? Infinity;
  shortText(q.q);
  const view = syncedView(world);
  const anchor = q.anchor_ticker === undefined ? undefined : view.byTicker.get(q.anchor_ticker.toUpperCase()) ?? refuse('detail', 404, `Market ${q.anchor_ticker} not found`);
  const target = anchor ? anchor.tokens : tokens(q.q!);
  const category = q.category?.toLowerCase();
  const scored = view.markets
    .filter((m) => m !== anchor && (category === undefined || m.ev.series.category.toLowerCase() === category) && m.ev.close_time < closeBefore && volume24h(m) >= minVolume)
    .map((m) => ({ m, distance: distance(target, m.tokens) }))
    .sort((a, b) => a.distance - b.distance || byTicker(a.m, b.m))
    .slice(0, topK);
  return {
    status: 200,
    body: {
      anchor_ticker: anchor?.ticker ?? null,
      anchor_query: q.q ?? null,
      data: scored.map(({ m, distance: d }) => ({ market_ticker: m.ticker, event_ticker: m.ev.ticker, title: marketTitle(m), category: m.ev.series.category, distance: d })),
    },
  };
}

const CLUSTER_KINDS = ['thematic', 'behavioral'] as const;

function clusterPeers(world: SimWorld, ticker: string, q: Record<string, string>): Reply {
  allowOnly('detail', q, ['kind', 'limit']);
  const kind = oneOf(CLUSTER_KINDS, 'kind', q.kind, 'thematic');
  const limit = intParam('detail', q, 'limit', 50, 1, 200, 422);
  const view = syncedView(world);
  const anchor = view.byTicker.get(ticker.toUpperCase()) ?? refuse('detail', 404, `Market ${ticker} not found`);
  const found = clusterOf(view, anchor, kind) ?? refuse('detail', 404, `Market ${anchor.ticker} has no ${kind} cluster in the current run`);
  const peers = found.members
    .filter((m) => m !== anchor)
    .map((m) => ({ m, distance: kind === 'thematic' ? distance(anchor.tokens, m.tokens) : behaviorDistance(anchor, m) }))
    .sort((a, b) => a.distance - b.distance || byTicker(a.m, b.m))
    .slice(0, limit);
  return {
    status: 200,
    body: {
      market_ticker: anchor.ticker,
      kind,
      cluster: found.cluster,
      data: peers.map(({ m, distance: d }) => ({ market_ticker: m.ticker, title: marketTitle(m), distance: d })),
    },
  };
}

// ---- model edge ----

const RANKING_SORTS = ['edge_pp', 'expected_return', 'total_volume', 'model_probability'] as const;
type RankingSort = (typeof RANKING_SORTS)[number];
const rankings = new WeakMap<MarketView, Map<RankingSort, Array<{ ev: SimEvent; snapshot: Snapshot }>>>();

/** The scored events of a view, best first by one field (computed once per view). */
function ranked(view: MarketView, sortBy: RankingSort): ReadonlyArray<{ ev: SimEvent; snapshot: Snapshot }> {
  let lists = rankings.get(view);
  if (!lists) rankings.set(view, (lists = new Map<RankingSort, Array<{ ev: SimEvent; snapshot: Snapshot }>>()));
  const hit = lists.get(sortBy);
  if (hit) return hit;
  const value = (s: Snapshot): number => s[sortBy] ?? -Infinity;
  const rows = view.events
    .filter(({ snapshot }) => snapshot.model_probability !== null)
    .sort((a, b) => value(b.snapshot) - value(a.snapshot) || (a.ev.ticker < b.ev.ticker ? -1 : 1));
  lists.set(sortBy, rows);
  return rows;
}

function marketsWithEdge(world: SimWorld, q: Record<string, string>): Reply {
  allowOnly('detail', q, ['run_id', 'category', 'edge_pp_min', 'edge_pp_max', 'expected_return_min', 'total_volume_min', 'model_probability_min', 'sort_by', 'limit', 'cursor']);
  const sortBy = oneOf(RANKING_SORTS, 'sort_by', q.sort_by, 'edge_pp');
  const limit = intParam('detail', q, 'limit', 50, 1, 200, 422);
  const offset = offsetCursor('detail', q.cursor);
  const min = (name: string) => numberParam('detail', q, name) ?? -Infinity;
  const edgeMin = min('edge_pp_min');
  const edgeMax = numberParam('detail', q, 'edge_pp_max') ?? Infinity;
  const returnMin = min('expected_return_min');
  const volumeMin = min('total_volume_min');
  const modelMin = min('model_probability_min');
  const category = q.category?.toLowerCase();
  const view = viewOfRun(world, q.run_id);
  const rows = ranked(view, sortBy).filter(({ ev, snapshot: s }) =>
    (category === undefined || ev.series.category.toLowerCase() === category) &&
    (s.edge_pp ?? 0) >= edgeMin && (s.edge_pp ?? 0) <= edgeMax && (s.expected_return ?? 0) >= returnMin &&
    s.total_volume >= volumeMin && (s.model_probability ?? 0) >= modelMin);
  const { slice, ...more } = page(rows, offset, limit);
  return {
    status: 200,
    body: { run_id: view.runId, captured_at: iso(view.refreshedAt), sort_by: sortBy, data: slice.map(({ ev, snapshot }) => rankingRow(ev, snapshot)), ...more },
  };
}

const EdgeBody = z.object({
  tickers: z.array(z.string().min(1)).min(1).max(100),
  run_id: z.string().optional(),
});

function marketsEdge(world: SimWorld, body: string): Reply {
  const parsed = jsonBody('detail', body, EdgeBody);
  const view = viewOfRun(world, parsed.run_id);
  const data = [];
  for (const input of parsed.tickers) {
    const event = view.eventsByTicker.get(input.toUpperCase());
    if (event) {
      data.push(edgeRow(input, null, event.ev, event.snapshot));
      continue;
    }
    // A market resolves to its parent event.
    const market = view.byTicker.get(input.toUpperCase());
    if (market) data.push(edgeRow(input, market.ticker, market.ev, market.snapshot));
  }
  return { status: 200, body: { run_id: view.runId, captured_at: iso(view.refreshedAt), data } };
}

// ---- baskets ----

const BacktestBody = z.object({
  market_tickers: z.array(z.string().min(1)).min(1).max(100),
  weights: z.array(z.number()).optional(),
  // Checked by hand: an unknown timeframe is a 400, not a 422.
  timeframe: z.string().optional(),
});

function basketBacktest(world: SimWorld, body: string): Reply {
  const parsed = jsonBody('detail', body, BacktestBody);
  const timeframe = oneOf(Object.keys(TIMEFRAME_SPECS) as Timeframe[], 'timeframe', parsed.timeframe, '1y');
  const weights = parsed.weights;
  if (weights && weights.length !== parsed.market_tickers.length) refuse('detail', 400, 'weights and market_tickers must have the same length');
  if (weights && !(weights.reduce((sum, w) => sum + w, 0) > 0)) refuse('detail', 422, 'weights must sum to a positive value');
  const view = syncedView(world);
  const legs: Array<{ m: SimMarket; weight: number }> = [];
  const missing: string[] = [];
  parsed.market_tickers.forEach((ticker, i) => {
    const m = view.byTicker.get(ticker.toUpperCase());
    if (m) legs.push({ m, weight: weights?.[i] ?? 1 });
    else missing.push(ticker);
  });
  if (legs.length === 0) refuse('detail', 422, `market_tickers: no price data for any of ${missing.join(', ')}`);
  const spec = TIMEFRAME_SPECS[timeframe];
  const end = view.refreshedAt;
  const candles = navCandles(legs.map(({ m }) => (time: number) => priceAt(m, time)), legs.map((l) => l.weight), end - spec.lookbackDays * DAY, end, spec.binMs);
  const navs = [candles[0]!.open, ...candles.map((c) => c.close)];
  return {
    status: 200,
    body: {
      timeframe,
      interval_source: spec.binMs < DAY ? '1h' : '1d',
      candles,
      tickers: legs.map(({ m }) => m.ticker),
      missing,
      summary: backtestSummary(navs, spec.periodsPerYear),
    },
  };
}

const ValidateBody = z.object({
  legs: z.array(z.object({ market_ticker: z.string().min(1), side: z.enum(['yes', 'no']).default('yes'), stake_usd: z.number().nonnegative() })).min(1).max(50),
  bankroll_usd: z.number().positive().optional(),
  correlation_window_days: z.number().int().min(7).max(730).default(30),
  correlation_interval: z.enum(['1h', '1d']).optional(),
  max_pairwise_correlation: z.number().min(-1).max(1).optional(),
  calendar_clash_window_days: z.number().int().min(1).max(90).default(7),
});

function basketValidate(world: SimWorld, body: string): Reply {
  const parsed = jsonBody('detail', body, ValidateBody);
  const view = syncedView(world);
  const step = (parsed.correlation_interval ?? (parsed.correlation_window_days >= 90 ? '1d' : '1h')) === '1h' ? HOUR : DAY;
  const end = view.refreshedAt;
  const times: number[] = [];
  for (let t = end - parsed.correlation_window_days * DAY; t <= end; t += step) times.push(t);
  const legs: ValidationLeg[] = parsed.legs.map((leg) => {
    const m = view.byTicker.get(leg.market_ticker.toUpperCase());
    if (!m) return { ticker: leg.market_ticker, stake: leg.stake_usd };
    const series = times.map((t) => (leg.side === 'no' ? 1 - priceAt(m, t) : priceAt(m, t)));
    return {
      ticker: m.ticker,
      stake: leg.stake_usd,
      market: { eventTicker: m.ev.ticker, closeTime: m.ev.close_time, thematic: m.thematic, behavioral: m.behavioral, volume24h: volume24h(m), series },
    };
  });
  const options = {
    bankroll: parsed.bankroll_usd ?? null,
    maxCorrelation: parsed.max_pairwise_correlation,
    clashWindowDays: parsed.calendar_clash_window_days,
    asOf: end,
  };
  return { status: 200, body: validateBasket(legs, options) };
}

export const MARKET_ROUTES: Route[] = [
  { method: 'GET', pattern: /^\/predictions\/venuea\/markets$/, handler: (w, r) => searchMarkets(w, r.query) },
  { method: 'GET', pattern: /^\/predictions\/venuea\/markets\/similar$/, handler: (w, r) => similarMarkets(w, r.query) },
  { method: 'GET', pattern: /^\/predictions\/venuea\/markets\/([^/]+)\/cluster-peers$/, handler: (w, r, [t]) => clusterPeers(w, t!, r.query) },
  { method: 'GET', pattern: /^\/predictions\/venuea\/markets-with-edge$/, handler: (w, r) => marketsWithEdge(w, r.query) },
  { method: 'POST', pattern: /^\/predictions\/venuea\/markets\/edge$/, handler: (w, r) => marketsEdge(w, r.body) },
  { method: 'POST', pattern: /^\/predictions\/venuea\/baskets\/backtest$/, handler: (w, r) => basketBacktest(w, r.body) },
  { method: 'POST', pattern: /^\/predictions\/venuea\/baskets\/validate$/, handler: (w, r) => basketValidate(w, r.body) },
];
