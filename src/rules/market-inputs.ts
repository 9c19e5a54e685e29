// What the market-search sources fetch, as rule files write it: `watchlists` and `baskets` (top-level
// keys) and a rule's `query`, checked against the endpoint's own parameters with the API client's
// request schemas, so that a query goes to the API as written. Pure.
import { z } from 'zod';
import {
  BasketValidateBody,
  ClusterPeersQuery,
  EDGE_TICKERS_MAX,
  MarketSearchQuery,
  RankingQuery,
  SimilarQuery,
  TIMEFRAMES,
} from '../api/market-schemas.ts';
import type { MarketSourceName } from '../core/types.ts';

/** A watchlist: the market or event tickers of one model-edge request (the endpoint takes 1-100). */
export const WatchlistSchema = z
  .array(z.string().min(1), { error: 'a watchlist is a list of market or event tickers' })
  .min(1, { error: 'needs at least one ticker' })
  .max(EDGE_TICKERS_MAX, { error: (issue) => `at most ${EDGE_TICKERS_MAX} tickers (the edge endpoint's limit), got ${(issue.input as unknown[]).length}` });

/** A basket: its legs (as baskets/validate takes them), its backtest timeframe and validation threshold. */
export const BasketSchema = z.strictObject({
  legs: BasketValidateBody.shape.legs,
  bankroll_usd: BasketValidateBody.shape.bankroll_usd,
  timeframe: z.enum(TIMEFRAMES).optional(),
  max_pairwise_correlation: BasketValidateBody.shape.max_pairwise_correlation,
});
export type Basket = z.output<typeof BasketSchema>;

export const BASKET_KEYS = Object.keys(BasketSchema.shape);

/** Which rule key names a source's input; the other market keys are refused on it. */
export const INPUT_KEY: Readonly<Record<MarketSourceName, 'watchlist' | 'query' | 'basket'>> = {
  edge: 'watchlist',
  rankings: 'query',
  markets: 'query',
  similar: 'query',
  baskets: 'basket',
};

/** Sources whose input is required (rankings and markets have the endpoint's defaults). */
export const INPUT_REQUIRED: ReadonlySet<MarketSourceName> = new Set(['edge', 'similar', 'baskets']);

// `similar` takes the similarity search's parameters, or `cluster_of` (a market ticker) with the
// cluster peers' parameters.
const SimilarSearch = z.strictObject(SimilarQuery.shape);
const ClusterPeersOf = z.strictObject({ cluster_of: z.string().min(1), ...ClusterPeersQuery.shape });

/** A query's schema: the endpoint's own parameters (the cursor is the poller's). */
export function querySchema(source: 'rankings' | 'markets' | 'similar', query: Readonly<Record<string, unknown>>): z.ZodObject {
  if (source === 'rankings') return RankingQuery;
  if (source === 'markets') return MarketSearchQuery;
  return Object.hasOwn(query, 'cluster_of') ? ClusterPeersOf : SimilarSearch;
}

/** What a `similar` query needs besides its parameters' own checks: exactly one way to say "like what". */
export function similarQueryProblem(query: Readonly<Record<string, unknown>>): string | undefined {
  const given = ['anchor_ticker', 'q', 'cluster_of'].filter((key) => Object.hasOwn(query, key));
  if (given.length === 0) return 'similar needs anchor_ticker or q (with top_k), or cluster_of (with kind)';
  if (given.length > 1) return `${given.join(' and ')} cannot be used together: similar takes one of anchor_ticker, q and cluster_of`;
  return undefined;
}

/** Parameters of the markets search that narrow it; a query with none matches every market. */
const NARROWING = ['q', 'category', 'series_ticker', 'series_prefix', 'event_ticker', 'close_before', 'min_volume_24h'];

/** A markets query with nothing that narrows it: it matches every market, thousands of them. */
export function matchesEveryMarket(query: Readonly<Record<string, unknown>>): boolean {
  return !NARROWING.some((key) => Object.hasOwn(query, key));
}

/** Pages of one markets query read per poll: a query that matches thousands of markets watches the first pages only. */
export const MARKETS_PAGE_BUDGET = 5;
