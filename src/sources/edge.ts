// edge: the model edge of each watchlist's tickers. One request per 100 distinct tickers of all
// the watchlists together; each watchlist is a feed of its own, judged by the rules that name it.
// A ticker's first sighting in a watchlist is its baseline, so that adding one fires nothing.
import type { Rule } from '../rules/index.ts';
import { feedKey, groupRules, pollFeeds } from './feeds.ts';
import type { FetchContext, SourcePage, SourcePages } from './types.ts';

export function fetchEdge(ctx: FetchContext): SourcePages {
  if (ctx.rules.length === 0) return 'idle';
  const byWatchlist = groupRules(ctx.rules, (rule) => rule.watchlist);
  return pollFeeds('edge', [{ rules: ctx.rules, pages: () => edgePages(ctx, byWatchlist) }]);
}

async function* edgePages(ctx: FetchContext, byWatchlist: ReadonlyMap<string | undefined, Rule[]>): AsyncGenerator<SourcePage> {
  const tickers = [...new Set(ctx.rules.flatMap((rule) => rule.watchlistTickers ?? []))];
  const rows = new Map((await ctx.api.edge(tickers)).data.map((row) => [row.input_ticker, row]));
  for (const [watchlist, rules] of byWatchlist) {
    const watched = rules[0]?.watchlistTickers ?? [];
    const items = watched.flatMap((ticker) => {
      const row = rows.get(ticker);
      return row ? [{ key: ticker, data: row, baseline: true }] : [];
    });
    yield { items, feed: { key: feedKey('edge', { watchlist }), rules } };
  }
}
