// markets: the markets search for each distinct query, at most MARKETS_PAGE_BUDGET pages a poll
// (a query that matches thousands of markets watches its first pages and says so). A query's
// first poll is its baseline; a market it finds later for the first time is `new`.
import { MARKETS_PAGE_BUDGET } from '../rules/index.ts';
import { feedKey, groupRules, pollFeeds, ruleNames } from './feeds.ts';
import type { FetchContext, SourcePage, SourcePages } from './types.ts';

export function fetchMarkets(ctx: FetchContext): SourcePages {
  if (ctx.rules.length === 0) return 'idle';
  const feeds = groupRules(ctx.rules, (rule) => feedKey('markets', rule.query ?? {}));
  return pollFeeds(
    'markets',
    [...feeds].map(([key, rules]) => ({ rules, pages: () => marketPages(ctx, key, rules[0]?.query ?? {}, rules) })),
  );
}

async function* marketPages(ctx: FetchContext, key: string, query: Readonly<Record<string, unknown>>, rules: FetchContext['rules']): AsyncGenerator<SourcePage> {
  const first = !(await ctx.stored.polledFeeds([key])).has(key);
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
