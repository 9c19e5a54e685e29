// rankings: the edge ranking (markets-with-edge) for each distinct query, read page by page down
// to its `limit` (the endpoint's default, 50, when the query has none). Each row gets its `rank`,
// 1 first, in the endpoint's order. An event that left the ranking keeps its last snapshot with
// `rank: null`, so that `crosses` on rank re-arms and its return is `appears`.
import type { SnapshotItem } from '../core/types.ts';
import { pollQueries, type QueryFeed } from './feeds.ts';
import type { FetchContext, SourcePage, SourcePages } from './types.ts';

/** The endpoint's default `limit`. */
const DEFAULT_LIMIT = 50;

export function fetchRankings(ctx: FetchContext): SourcePages {
  return pollQueries(ctx, 'rankings', (feed) => rankingPages(ctx, feed));
}

async function* rankingPages(ctx: FetchContext, { key, query, rules, first }: QueryFeed): AsyncGenerator<SourcePage> {
  const limit = typeof query.limit === 'number' ? query.limit : DEFAULT_LIMIT;
  const items: SnapshotItem[] = [];
  const ranked = new Set<string>();
  for await (const page of ctx.api.marketsWithEdgePages({ ...query, limit })) {
    for (const row of page.rows) {
      if (items.length >= limit || ranked.has(row.event_ticker)) continue;
      ranked.add(row.event_ticker);
      items.push({ key: row.event_ticker, data: { ...row, rank: items.length + 1 }, baseline: first });
    }
    if (items.length >= limit) break;
  }
  if (!first) {
    for (const [ticker, snapshot] of await ctx.stored.feedSnapshots(key)) {
      if (!ranked.has(ticker) && snapshot.rank !== null) items.push({ key: ticker, data: { ...snapshot, rank: null } });
    }
  }
  yield { items, feed: { key, rules }, ...(first ? { polledFeeds: [key] } : {}) };
}
