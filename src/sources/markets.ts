// markets: the markets search for each distinct query, at most MARKETS_PAGE_BUDGET pages a poll
// (a query that matches thousands of markets watches its first pages and says so). A query's
// first poll is its baseline; a market it finds later for the first time is `new`.
import { MARKETS_PAGE_BUDGET } from '../rules/index.ts';
import { pollQueries, ruleNames, type QueryFeed } from './feeds.ts';
import type { FetchContext, SourcePage, SourcePages } from './types.ts';

export function fetchMarkets(ctx: FetchContext): SourcePages {
  return pollQueries(ctx, 'markets', (feed) => marketPages(ctx, feed));
}

async function* marketPages(ctx: FetchContext, { key, query, rules, first }: QueryFeed): AsyncGenerator<SourcePage> {
  const feed = { key, rules };
  let pages = 0;
  for await (const page of ctx.api.marketPages(query)) {
    pages++;
    const items = page.rows.map((row) => ({ key: row.market_ticker, data: row, baseline: first }));
    const overBudget = pages >= MARKETS_PAGE_BUDGET && page.hasMore;
    const notices = overBudget ? [`markets: ${ruleNames(rules)}: the query matches more than ${pages} pages of markets: only those are watched; narrow it`] : [];
    yield { items, feed, notices };
    if (overBudget) break;
  }
  if (first) yield { items: [], feed, polledFeeds: [key] };
}
