// The client's methods for api/market-search-and-baskets.md: markets search, similar markets,
// cluster peers, the edge ranking, model edge, basket backtest and validation. They are built on
// the client's request and page primitives (one request with retries, list walks, body checks). Parameters and bodies
// keep the endpoint's own snake_case names, as a rule file's `query` does, so a query passes
// through unchanged.
import type { z } from 'zod';
import { fetchOne, listPages, parseRows, type ListLimits, type Page } from './pages.ts';
import type { ListCall, RequestContext } from './request.ts';
import { ApiError } from './errors.ts';
import {
  BasketBacktest,
  BasketValidation,
  ClusterPeer,
  ClusterPeersEnvelope,
  EDGE_TICKERS_MAX,
  MIN_SEARCH_TEXT,
  MarketRow,
  ModelEdgeEnvelope,
  ModelEdgeRow,
  RankingEnvelope,
  RankingRow,
  SimilarEnvelope,
  SimilarMarket,
  type BasketBacktestBody,
  type BasketValidateBody,
  type ClusterPeersQuery,
  type MarketSearchQuery,
  type RankingQuery,
  type SimilarQuery,
} from './market-schemas.ts';
import { PageEnvelope } from './schemas.ts';

export interface RankingPage extends Page<RankingRow> {
  runId: string | null;
  capturedAt: string | null;
  sortBy: string | null | undefined;
}

/** A response whose `data` rows were validated one by one. (Omit would drop the named keys of a loose object.) */
type WithRows<E extends { data: unknown[] }, R> = { [K in keyof E as K extends 'data' ? never : K]: E[K] } & { data: R[] };

export type SimilarResponse = WithRows<z.infer<typeof SimilarEnvelope>, SimilarMarket>;
export type ClusterPeersResponse = WithRows<z.infer<typeof ClusterPeersEnvelope>, ClusterPeer>;
export type ModelEdgeResponse = WithRows<z.infer<typeof ModelEdgeEnvelope>, ModelEdgeRow>;

export interface MarketSearchMethods {
  /** Every page of a markets search; pages of 200 unless `limit` says otherwise. */
  marketPages(query?: MarketSearchQuery): AsyncIterable<Page<MarketRow>>;
  similarMarkets(query: SimilarQuery): Promise<SimilarResponse>;
  clusterPeers(marketTicker: string, query?: ClusterPeersQuery): Promise<ClusterPeersResponse>;
  /** Every page of the edge ranking; pages of 200 unless `limit` says otherwise. */
  marketsWithEdgePages(query?: RankingQuery): AsyncIterable<RankingPage>;
  /**
   * Model edge of any number of market or event tickers: one request per 100 (the API's limit),
   * rows merged in the order asked. No tickers, no request.
   */
  edge(tickers: readonly string[], runId?: string): Promise<ModelEdgeResponse>;
  basketBacktest(body: BasketBacktestBody): Promise<BasketBacktest>;
  basketValidate(body: BasketValidateBody): Promise<BasketValidation>;
}

/** The largest page these endpoints serve: a full walk in the fewest requests. */
const FULL_PAGE = 200;
const VENUE = '/predictions/venuea';

/**
 * The API answers a search text under 3 characters with a 503, which reads as "retry later": it
 * is refused here instead, at once.
 */
function shortText(q: string | undefined, resource: string): ApiError | undefined {
  if (q === undefined || q.length >= MIN_SEARCH_TEXT) return undefined;
  return new ApiError({
    code: 'invalid_request',
    resource,
    retryable: false,
    message: `${resource}: q must be at least ${MIN_SEARCH_TEXT} characters, got ${JSON.stringify(q)}`,
  });
}

// A walk that fails on its first next(), as a refused request does: nothing to yield.
// eslint-disable-next-line require-yield
async function* failing(error: ApiError): AsyncGenerator<never, void, undefined> {
  throw error;
}

export function marketSearchMethods(ctx: RequestContext & ListLimits): MarketSearchMethods {
  async function list<E extends { data: unknown[] }, R>(call: ListCall, envelope: z.ZodType<E>, row: z.ZodType<R>): Promise<WithRows<E, R>> {
    const env = await fetchOne(ctx, envelope, call);
    return { ...env, data: parseRows(ctx, row, env.data, call) };
  }

  function edgeRequest(tickers: string[], runId: string | undefined): Promise<ModelEdgeResponse> {
    const body = runId === undefined ? { tickers } : { tickers, run_id: runId };
    return list({ method: 'POST', path: `${VENUE}/markets/edge`, body, resource: 'model edge', rowKey: 'input_ticker' }, ModelEdgeEnvelope, ModelEdgeRow);
  }

  return {
    marketPages(query = {}) {
      const call: ListCall = {
        method: 'GET',
        path: `${VENUE}/markets`,
        resource: 'markets search',
        rowKey: 'market_ticker',
        query: { ...query, limit: query.limit ?? FULL_PAGE },
      };
      const refused = shortText(query.q, call.resource);
      if (refused) return failing(refused);
      return listPages(ctx, call, PageEnvelope, MarketRow, () => ({}));
    },

    async similarMarkets(query) {
      const resource = 'similar markets';
      const refused = shortText(query.q, resource);
      if (refused) throw refused;
      return list({ method: 'GET', path: `${VENUE}/markets/similar`, query, resource, rowKey: 'market_ticker' }, SimilarEnvelope, SimilarMarket);
    },

    async clusterPeers(marketTicker, query = {}) {
      const call: ListCall = {
        method: 'GET',
        path: `${VENUE}/markets/${encodeURIComponent(marketTicker)}/cluster-peers`,
        query,
        resource: `cluster peers ${marketTicker}`,
        rowKey: 'market_ticker',
      };
      return list(call, ClusterPeersEnvelope, ClusterPeer);
    },

    marketsWithEdgePages(query = {}) {
      const call: ListCall = {
        method: 'GET',
        path: `${VENUE}/markets-with-edge`,
        resource: 'markets with edge',
        rowKey: 'event_ticker',
        query: { ...query, limit: query.limit ?? FULL_PAGE },
      };
      return listPages(ctx, call, RankingEnvelope, RankingRow, (env) => ({ runId: env.run_id, capturedAt: env.captured_at, sortBy: env.sort_by }));
    },

    async edge(tickers, runId) {
      const chunks: string[][] = [];
      for (let i = 0; i < tickers.length; i += EDGE_TICKERS_MAX) chunks.push(tickers.slice(i, i + EDGE_TICKERS_MAX));
      const [head, ...tail] = chunks;
      if (head === undefined) return { run_id: runId ?? null, captured_at: null, data: [] };
      const first = await edgeRequest(head, runId);
      // The other requests ask for the first one's scoring run: every row then comes from one run,
      // even when the nightly refresh lands between two requests.
      const pinned = runId ?? first.run_id ?? undefined;
      const rest = await Promise.all(tail.map((chunk) => edgeRequest(chunk, pinned)));
      return { ...first, data: [first, ...rest].flatMap((response) => response.data) };
    },

    async basketBacktest(body) {
      const resource = 'basket backtest';
      return fetchOne(ctx, BasketBacktest, { method: 'POST', path: `${VENUE}/baskets/backtest`, body, resource });
    },

    async basketValidate(body) {
      const resource = 'basket validate';
      return fetchOne(ctx, BasketValidation, { method: 'POST', path: `${VENUE}/baskets/validate`, body, resource });
    },
  };
}
