// similar: the markets like an anchor market or a text (`anchor_ticker` or `q`, with `top_k`), or
// the peers of a market's cluster (`cluster_of` with `kind`), for each distinct query, with their
// `distance`. A query's first poll is its baseline; a market that shows up later is `new`; one
// that drops out keeps its last snapshot.
import { feedKey, groupRules, pollFeeds } from './feeds.ts';
import type { FetchContext, SourcePage, SourcePages } from './types.ts';

export function fetchSimilar(ctx: FetchContext): SourcePages {
  if (ctx.rules.length === 0) return 'idle';
  const feeds = groupRules(ctx.rules, (rule) => feedKey('similar', rule.query ?? {}));
  return pollFeeds(
    'similar',
    [...feeds].map(([key, rules]) => ({ rules, pages: () => similarPages(ctx, key, rules[0]?.query ?? {}, rules) })),
  );
}

async function* similarPages(ctx: FetchContext, key: string, query: Readonly<Record<string, unknown>>, rules: FetchContext['rules']): AsyncGenerator<SourcePage> {
  const first = !(await ctx.stored.polledFeeds([key])).has(key);
  const { cluster_of: clusterOf, ...params } = query;
  const response = typeof clusterOf === 'string' ? await ctx.api.clusterPeers(clusterOf, params) : await ctx.api.similarMarkets(query);
  const items = response.data.map((row) => ({ key: row.market_ticker, data: row, baseline: first }));
  yield { items, feed: { key, rules }, ...(first ? { polledFeeds: [key] } : {}) };
}
