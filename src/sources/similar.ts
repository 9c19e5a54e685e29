// similar: the markets like an anchor market or a text (`anchor_ticker` or `q`, with `top_k`), or
// the peers of a market's cluster (`cluster_of` with `kind`), for each distinct query, with their
// `distance`. A query's first poll is its baseline; a market that shows up later is `new`; one
// that drops out keeps its last snapshot.
import { pollQueries, type QueryFeed } from './feeds.ts';
import type { FetchContext, SourcePage, SourcePages } from './types.ts';

export function fetchSimilar(ctx: FetchContext): SourcePages {
  return pollQueries(ctx, 'similar', (feed) => similarPages(ctx, feed));
}

async function* similarPages(ctx: FetchContext, { key, query, rules, first }: QueryFeed): AsyncGenerator<SourcePage> {
  const { cluster_of: clusterOf, ...params } = query;
  const response = typeof clusterOf === 'string' ? await ctx.api.clusterPeers(clusterOf, params) : await ctx.api.similarMarkets(query);
  const items = response.data.map((row) => ({ key: row.market_ticker, data: row, baseline: first }));
  yield { items, feed: { key, rules }, ...(first ? { polledFeeds: [key] } : {}) };
}
