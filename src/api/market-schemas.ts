// Zod schemas of api/market-search-and-baskets.md: what edgewatch sends (query parameters and
// bodies, with their documented ranges) and what it reads back. Each type is inferred from its
// schema.
//
// Requests are strict: a parameter the endpoint does not take is an error, so that a rule's
// `query` (written in the endpoint's own names) can be checked with these very schemas. The
// client sends what it is given and reports the API's answer; it checks only the length of a
// search text, whose refusal the API sends as a retryable 503.
// Responses are loose, as in schemas.ts: the fields the product reads are checked, the rest passes
// through.
import { z } from 'zod';
import { PageEnvelope } from './schemas.ts';

const str = z.string();
const num = z.number();
const int = z.number().int();
const text = z.string().nullable();
const numOrNull = z.number().nullable();
const datetime = z.iso.datetime({ offset: true });
const limit = (max: number) => int.min(1).max(max);

// ---- requests --------------------------------------------------------------------------

export const MARKET_SORTS = ['volume_24h', 'close_time', 'last_price'] as const;
export const RANKING_SORTS = ['edge_pp', 'expected_return', 'total_volume', 'model_probability'] as const;
export const CLUSTER_KINDS = ['thematic', 'behavioral'] as const;
export const TIMEFRAMES = ['1w', '1m', '3m', '6m', '1y'] as const;
export const SIDES = ['yes', 'no'] as const;
/** Shorter search text is refused by the API (with a 503, which must not be retried). */
export const MIN_SEARCH_TEXT = 3;

/** GET /predictions/venuea/markets (the client walks the cursor itself). */
export const MarketSearchQuery = z.strictObject({
  q: str.min(MIN_SEARCH_TEXT).optional(),
  category: str.optional(),
  series_ticker: str.optional(),
  series_prefix: str.optional(),
  event_ticker: str.optional(),
  close_before: datetime.optional(),
  min_volume_24h: num.optional(),
  sort_by: z.enum(MARKET_SORTS).optional(),
  boost_category: str.optional(),
  limit: limit(200).optional(),
});
export type MarketSearchQuery = z.infer<typeof MarketSearchQuery>;

/** GET /predictions/venuea/markets/similar: exactly one of anchor_ticker and q. */
export const SimilarQuery = z
  .strictObject({
    anchor_ticker: str.min(1).optional(),
    q: str.min(MIN_SEARCH_TEXT).optional(),
    top_k: limit(100).optional(),
    category: str.optional(),
    min_volume_24h: num.optional(),
    close_before: datetime.optional(),
  })
  .refine((query) => (query.anchor_ticker === undefined) !== (query.q === undefined), {
    message: 'exactly one of anchor_ticker and q is required',
  });
export type SimilarQuery = z.infer<typeof SimilarQuery>;

/** GET /predictions/venuea/markets/{market_ticker}/cluster-peers */
export const ClusterPeersQuery = z.strictObject({
  kind: z.enum(CLUSTER_KINDS).optional(),
  limit: limit(200).optional(),
});
export type ClusterPeersQuery = z.infer<typeof ClusterPeersQuery>;

/** GET /predictions/venuea/markets-with-edge (the client walks the cursor itself). */
export const RankingQuery = z.strictObject({
  run_id: z.uuid().optional(),
  category: str.optional(),
  edge_pp_min: num.optional(),
  edge_pp_max: num.optional(),
  expected_return_min: num.optional(),
  total_volume_min: num.optional(),
  model_probability_min: num.min(0).max(100).optional(),
  sort_by: z.enum(RANKING_SORTS).optional(),
  limit: limit(200).optional(),
});
export type RankingQuery = z.infer<typeof RankingQuery>;

/** POST /predictions/venuea/markets/edge takes at most this many tickers; the client splits longer lists. */
export const EDGE_TICKERS_MAX = 100;

/** POST /predictions/venuea/baskets/backtest (and candles). */
export const BasketBacktestBody = z
  .strictObject({
    market_tickers: z.array(str.min(1)).min(1).max(100),
    weights: z.array(num).optional(),
    timeframe: z.enum(TIMEFRAMES).optional(),
  })
  .refine((body) => body.weights === undefined || body.weights.length === body.market_tickers.length, {
    message: 'weights must have one number per market ticker',
    path: ['weights'],
  });
export type BasketBacktestBody = z.infer<typeof BasketBacktestBody>;

export const BasketLeg = z.strictObject({
  market_ticker: str.min(1),
  side: z.enum(SIDES).optional(),
  stake_usd: num,
});
export type BasketLeg = z.infer<typeof BasketLeg>;

/** POST /predictions/venuea/baskets/validate */
export const BasketValidateBody = z.strictObject({
  legs: z.array(BasketLeg).min(1).max(50),
  bankroll_usd: num.positive().optional(),
  correlation_window_days: int.min(7).max(730).optional(),
  correlation_interval: z.enum(['1h', '1d']).optional(),
  max_pairwise_correlation: num.min(-1).max(1).optional(),
  calendar_clash_window_days: int.min(1).max(90).optional(),
});
export type BasketValidateBody = z.infer<typeof BasketValidateBody>;

// ---- responses -------------------------------------------------------------------------

/** A row of the markets search (and of cluster member lists). Prices 0-1. */
export const MarketRow = z.looseObject({
  market_ticker: str,
  event_ticker: str,
  series_ticker: str,
  title: str,
  subtitle: text,
  status: str,
  close_time: str,
  last_price: num,
  yes_bid: num,
  yes_ask: num,
  no_bid: num,
  no_ask: num,
  volume: num,
  volume_24h: num,
  liquidity: num,
  open_interest: num,
  category: str,
  event_name: str,
});
export type MarketRow = z.infer<typeof MarketRow>;

export const SimilarMarket = z.looseObject({
  market_ticker: str,
  event_ticker: str,
  title: str,
  category: str,
  /** Lower is closer. */
  distance: num,
});
export type SimilarMarket = z.infer<typeof SimilarMarket>;

/** Rows left unparsed: the client validates them one by one, naming each by its ticker. */
export const SimilarEnvelope = z.looseObject({
  anchor_ticker: text,
  anchor_query: text,
  data: z.array(z.unknown()),
});

export const ClusterPeer = z.looseObject({ market_ticker: str, title: str, distance: num });
export type ClusterPeer = z.infer<typeof ClusterPeer>;

export const ClusterPeersEnvelope = z.looseObject({
  market_ticker: str,
  kind: str,
  cluster: z.looseObject({ cluster_id: int, label: str, description: text.optional(), size: int }),
  data: z.array(z.unknown()),
});

const edgeNumbers = {
  model_probability: numOrNull,
  market_probability: numOrNull,
  edge_pp: numOrNull,
  expected_return: numOrNull,
  confidence_score: num,
  total_volume: num,
  total_open_interest: num,
};

/** A row of markets-with-edge. Probabilities 0-100. */
export const RankingRow = z.looseObject({
  event_ticker: str,
  title: str,
  series_category: str,
  ...edgeNumbers,
});
export type RankingRow = z.infer<typeof RankingRow>;

export const RankingEnvelope = PageEnvelope.extend({
  run_id: text,
  captured_at: text,
  sort_by: text.optional(),
});
export type RankingEnvelope = z.infer<typeof RankingEnvelope>;

export const ModelEdgeRow = z.looseObject({
  input_ticker: str,
  market_ticker: text,
  event_ticker: str,
  title: str,
  series_category: str,
  ...edgeNumbers,
  status: str,
  captured_at: str,
});
export type ModelEdgeRow = z.infer<typeof ModelEdgeRow>;

export const ModelEdgeEnvelope = z.looseObject({
  run_id: text,
  captured_at: text,
  data: z.array(z.unknown()),
});

export const Candle = z.looseObject({ time: int, open: num, high: num, low: num, close: num });

export const BacktestSummary = z.looseObject({
  total_return: num,
  annualized_return: num,
  sharpe: numOrNull,
  /** A negative fraction. */
  max_drawdown: num,
  win_rate: num,
  first_nav: num,
  final_nav: num,
  observation_count: int,
});
export type BacktestSummary = z.infer<typeof BacktestSummary>;

export const BasketBacktest = z.looseObject({
  timeframe: str,
  interval_source: str,
  candles: z.array(Candle),
  tickers: z.array(str),
  missing: z.array(str),
  summary: BacktestSummary,
});
export type BasketBacktest = z.infer<typeof BasketBacktest>;

const tickers = z.array(str);

export const BasketValidation = z.looseObject({
  total_stake_usd: num,
  bankroll_usd: numOrNull,
  max_leg_pct: num,
  cluster_breakdown_thematic: z.record(str, tickers),
  cluster_breakdown_behavioral: z.record(str, tickers),
  unassigned_market_tickers: tickers,
  // No pair to compare (one leg, or no overlapping prices): null.
  max_pairwise_correlation: numOrNull,
  pairwise_correlations: z.array(z.looseObject({ ticker_a: str, ticker_b: str, correlation: numOrNull })),
  calendar_clashes: z.array(z.looseObject({ window_start: str, window_end: str, market_tickers: tickers })),
  duplicate_underliers: z.array(z.looseObject({ event_ticker: str, market_tickers: tickers })),
  warnings: z.array(str),
});
export type BasketValidation = z.infer<typeof BasketValidation>;
