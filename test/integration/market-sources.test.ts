// The market-search sources against the sandbox over HTTP, each test with a fresh database: the
// first poll of a query is a baseline; what changes at the next nightly refresh fires once.
import { afterEach, describe, expect, it } from 'vitest';
import { startPipeline, type Pipeline } from '../helpers/pipeline.ts';

let pipeline: Pipeline | undefined;
afterEach(async () => {
  await pipeline?.close();
  pipeline = undefined;
});

async function start(rules: string): Promise<Pipeline> {
  pipeline = await startPipeline({ rules: `channels: { screen: { type: console } }\n${rules}` });
  return pipeline;
}

const firedBy = (p: Pipeline, rule: string) => p.storedAlerts().filter((a) => a.rule === rule);

/** The venuea events the market-search data covers. */
const venueaEvents = (p: Pipeline): string[] => p.sandbox.world.eventTickers().filter((t) => p.sandbox.world.eventVenue(t) === 'venuea');

/** Requests the sandbox received for a path under /predictions/venuea, since the last clear. */
function requestsTo(p: Pipeline, path: string): number {
  return p.sandbox.requests.filter((r) => r.path === `/v1/predictions/venuea${path}`).length;
}

/** Moves the world's events and refreshes the market-search data at once (no sync). */
function refreshWith(p: Pipeline, patches: Record<string, Record<string, unknown>>): void {
  p.sandbox.advance(1);
  for (const [ticker, patch] of Object.entries(patches)) p.sandbox.world.updateEvent(ticker, patch);
  p.sandbox.world.refreshMarkets();
}

describe('edge', () => {
  it('stores a baseline first; a watched edge crossing fires once, and re-polling fires nothing', async () => {
    const p = await start('');
    const [watched, other] = venueaEvents(p);
    await p.close();
    const q = await start(`
watchlists:
  fed: [${watched}, ${other}]
rules:
  - { name: fed-edge, source: edge, watchlist: fed, trigger: { type: crosses, field: edge_pp, above: 30, abs: true }, notify: [screen] }
`);
    refreshWith(q, { [watched!]: { edge_pp: 1 }, [other!]: { edge_pp: 2 } });
    expect((await q.poll()).alerts).toEqual([]);
    expect(q.sql.prepare("SELECT count(*) AS n FROM entities WHERE source = 'edge?watchlist=fed'").get()).toEqual({ n: 2 });

    refreshWith(q, { [watched!]: { edge_pp: -35 } });
    const fired = (await q.poll()).alerts;
    expect(fired.map((a) => [a.rule, a.source, a.entity, a.trigger])).toEqual([['fed-edge', 'edge', watched, 'crosses']]);
    expect(fired[0]!.summary).toMatch(/: edge -35\.0 pp crossed above 30 pp in absolute value$/);
    expect(firedBy(q, 'fed-edge')[0]!.current).toMatchObject({ input_ticker: watched, edge_pp: -35 });

    expect((await q.poll()).alerts).toEqual([]);
    q.sandbox.world.refreshMarkets();
    expect((await q.poll()).alerts).toEqual([]);
    expect(firedBy(q, 'fed-edge')).toHaveLength(1);
  });

  it('judges dwell and resolution on the watchlist feed: a crossing held for `for` fires once, and its clearing resolves it', async () => {
    const p = await start('');
    const [watched] = venueaEvents(p);
    await p.close();
    const q = await start(`
watchlists:
  one: [${watched}]
rules:
  - { name: held-edge, source: edge, watchlist: one, trigger: { type: crosses, field: edge_pp, above: 30 }, for: 30m, resolve: true, notify: [screen] }
`);
    refreshWith(q, { [watched!]: { edge_pp: 1 } });
    expect((await q.poll()).alerts).toEqual([]);

    refreshWith(q, { [watched!]: { edge_pp: 35 } });
    expect((await q.poll()).alerts).toEqual([]);
    expect(q.sql.prepare("SELECT source, kind FROM timers WHERE rule = 'held-edge'").all()).toEqual([{ source: 'edge?watchlist=one', kind: 'dwell' }]);
    // Polled again before the dwell is over: the wait is not restarted.
    const due = q.sql.prepare("SELECT due_at FROM timers WHERE rule = 'held-edge'").get();
    q.sandbox.advance(10);
    expect((await q.poll()).alerts).toEqual([]);
    expect(q.sql.prepare("SELECT due_at FROM timers WHERE rule = 'held-edge'").get()).toEqual(due);

    q.sandbox.advance(25);
    const fired = (await q.poll()).alerts;
    expect(fired.map((a) => [a.rule, a.entity])).toEqual([['held-edge', watched]]);
    expect((await q.poll()).alerts).toEqual([]);

    refreshWith(q, { [watched!]: { edge_pp: 2 } });
    await q.poll();
    expect(q.sql.prepare("SELECT alert_id FROM resolutions").all()).toEqual([{ alert_id: fired[0]!.id }]);
  });

  it('fetches watchlists of more than 100 tickers together in requests of at most 100, one per 100 distinct tickers', async () => {
    const p = await start('');
    const tickers = p.sandbox.world.marketTickers().slice(0, 120);
    await p.close();
    expect(tickers).toHaveLength(120);
    // Two watchlists of 80 sharing 40 tickers: 120 distinct.
    const q = await start(`
watchlists:
  first: [${tickers.slice(0, 80).join(', ')}]
  second: [${tickers.slice(40).join(', ')}]
rules:
  - { name: first-edge, source: edge, watchlist: first, trigger: { type: crosses, field: edge_pp, above: 30 }, notify: [screen] }
  - { name: second-edge, source: edge, watchlist: second, trigger: { type: crosses, field: edge_pp, above: 30 }, notify: [screen] }
  - { name: second-too, source: edge, watchlist: second, trigger: { type: new }, notify: [screen] }
`);
    q.sandbox.requests.length = 0;
    const report = await q.poll();
    // The sandbox refuses more than 100 tickers in one request (422): two requests that succeed.
    expect(report.failures).toEqual([]);
    expect(requestsTo(q, '/markets/edge')).toBe(2);
    const stored = q.sql.prepare<[], { source: string; n: number }>("SELECT source, count(*) AS n FROM entities WHERE source LIKE 'edge?%' GROUP BY source ORDER BY source").all();
    expect(stored).toEqual([
      { source: 'edge?watchlist=first', n: 80 },
      { source: 'edge?watchlist=second', n: 80 },
    ]);
  });
});

describe('rankings', () => {
  const RULES = `
rules:
  - name: top10
    source: rankings
    query: { sort_by: edge_pp, limit: 20 }
    trigger: { type: crosses, field: rank, below: 11 }
    notify: [screen]
  - name: top10-again
    source: rankings
    query: { limit: 20, sort_by: edge_pp }
    trigger: { type: appears, field: rank }
    notify: [screen]
`;

  it('fires crosses on rank when an event enters the top 10; one that leaves keeps its snapshot with rank null, and fires again on its return', async () => {
    const p = await start(RULES);
    p.sandbox.requests.length = 0;
    expect((await p.poll()).alerts).toEqual([]);
    // Two rules, one query (its parameters in another order): one request.
    expect(requestsTo(p, '/markets-with-edge')).toBe(1);
    const ranked = p.sql.prepare<[], { entity_key: string; data: string }>("SELECT entity_key, data FROM entities WHERE source = 'rankings?limit=20&sort_by=edge_pp'").all();
    expect(ranked).toHaveLength(20);
    const byRank = new Map(ranked.map((row) => [JSON.parse(row.data).rank as number, row.entity_key]));
    const fifteenth = byRank.get(15)!;

    refreshWith(p, { [fifteenth]: { edge_pp: 60 } });
    const entered = (await p.poll()).alerts.filter((a) => a.rule === 'top10' && a.entity === fifteenth);
    expect(entered).toHaveLength(1);
    expect(entered[0]!.summary).toMatch(/: rank #1 crossed below 11$/);
    expect(entered[0]!.changes[0]).toEqual({ field: 'rank', from: 15, to: 1 });

    refreshWith(p, { [fifteenth]: { edge_pp: -60 } });
    const left = await p.poll();
    expect(left.alerts.filter((a) => a.entity === fifteenth)).toEqual([]);
    const kept = p.sql.prepare<[string], { data: string }>("SELECT data FROM entities WHERE source = 'rankings?limit=20&sort_by=edge_pp' AND entity_key = ?").get(fifteenth)!;
    expect(JSON.parse(kept.data)).toMatchObject({ event_ticker: fifteenth, edge_pp: 60, rank: null });

    refreshWith(p, { [fifteenth]: { edge_pp: 61 } });
    const back = (await p.poll()).alerts.filter((a) => a.entity === fifteenth);
    expect(back.map((a) => a.rule).sort()).toEqual(['top10', 'top10-again']);
    expect(firedBy(p, 'top10').filter((a) => a.entity === fifteenth)).toHaveLength(2);
  });

  it('names the rule whose query the API refused (422), and polls the other queries of the source', async () => {
    const p = await start(`
rules:
  - { name: politics-ranked, source: rankings, query: { category: politics, limit: 5 }, trigger: { type: new }, notify: [screen] }
  - { name: crypto-ranked, source: rankings, query: { category: crypto, limit: 5 }, trigger: { type: new }, notify: [screen] }
`);
    p.sandbox.inject({ path: '/v1/predictions/venuea/markets-with-edge', status: 422, body: JSON.stringify({ detail: 'limit: value outside its documented range' }), count: 1 });
    const report = await p.poll();
    expect(report.failures).toEqual([
      { source: 'rankings', error: 'rule "politics-ranked": markets with edge: http_422 (HTTP 422): limit: value outside its documented range' },
    ]);
    const feeds = p.sql.prepare<[], { source: string }>("SELECT DISTINCT source FROM entities WHERE source LIKE 'rankings?%'").all();
    expect(feeds).toEqual([{ source: 'rankings?category=crypto&limit=5' }]);
  });

  it('takes a 503 (data not synced yet) as a notice, not a failure, and polls that query as a baseline next time', async () => {
    const p = await start(RULES);
    p.sandbox.inject({ path: '/v1/predictions/venuea/markets-with-edge', status: 503, count: 1 });
    const report = await p.poll();
    expect(report.failures).toEqual([]);
    expect(report.results.find((r) => r.source === 'rankings')?.notices).toEqual([
      'rankings: rules "top10", "top10-again": the API\'s data is not synced yet (HTTP 503): tried again at the next poll',
    ]);
    expect(p.sql.prepare("SELECT count(*) AS n FROM entities WHERE source LIKE 'rankings?%'").get()).toEqual({ n: 0 });
    // The next poll is the query's first: a baseline, which fires nothing.
    expect((await p.poll()).alerts).toEqual([]);
    expect(p.sql.prepare("SELECT count(*) AS n FROM entities WHERE source LIKE 'rankings?%'").get()).toEqual({ n: 20 });
  });
});

describe('similar', () => {
  it('fires new for a market that joins the most similar, not for those of the first poll; drop-outs keep their snapshot', async () => {
    const p = await start(`
rules:
  - { name: like-text, source: similar, query: { q: zebra quokka referendum, top_k: 5 }, trigger: { type: new }, notify: [screen] }
`);
    expect((await p.poll()).alerts).toEqual([]);
    const similar = "SELECT entity_key FROM entities WHERE source = 'similar?q=zebra%20quokka%20referendum&top_k=5' ORDER BY entity_key";
    const before = p.sql.prepare<[], { entity_key: string }>(similar).all();
    expect(before).toHaveLength(5);

    // A new event named like the text: its markets are the closest there are.
    p.sandbox.advance(1);
    const twin = p.sandbox.world.addEvent({ name: 'Zebra quokka referendum' });
    p.sandbox.world.refreshMarkets();
    const fired = (await p.poll()).alerts;
    expect(fired.length).toBeGreaterThan(0);
    expect(fired.every((a) => a.rule === 'like-text' && a.trigger === 'new' && a.entity.startsWith(`${twin}-`))).toBe(true);
    expect(fired[0]!.summary).toMatch(/^Zebra quokka referendum: .+: new similar market \(distance 0\.\d+\)$/);
    expect(fired[0]!.current).toMatchObject({ market_ticker: fired[0]!.entity, event_ticker: twin });
    // The markets pushed out of the top 5 are still stored, as they were.
    const after = p.sql.prepare<[], { entity_key: string }>(similar).all();
    expect(after.map((r) => r.entity_key)).toEqual(expect.arrayContaining(before.map((r) => r.entity_key)));
    expect((await p.poll()).alerts).toEqual([]);
  });
});

describe('baskets', () => {
  it('fires added when a warning appears, once across a restart, and again when it disappears and reappears; the first poll is a baseline', async () => {
    const p = await start('');
    const [x, y] = venueaEvents(p).filter((t) => p.sandbox.world.marketTickers().includes(`${t}-O1`));
    await p.close();
    const q = await start(`
baskets:
  rates-hedge:
    legs:
      - { market_ticker: ${x}-O1, side: yes, stake_usd: 200 }
      - { market_ticker: ${y}-O1, side: no, stake_usd: 100 }
    timeframe: 1m
rules:
  - { name: hedge-warnings, source: baskets, basket: rates-hedge, trigger: { type: added, field: warnings }, notify: [screen] }
  - { name: hedge-drawdown, source: baskets, basket: rates-hedge, trigger: { type: crosses, field: max_drawdown, below: -0.99 }, notify: [screen] }
`);
    const closeIn = (days: number) => new Date(q.sandbox.now().getTime() + days * 86_400_000).toISOString();
    refreshWith(q, { [x!]: { close_time: closeIn(20) }, [y!]: { close_time: closeIn(40) } });
    q.sandbox.requests.length = 0;
    expect((await q.poll()).alerts).toEqual([]);
    expect(requestsTo(q, '/baskets/backtest')).toBe(1);
    expect(requestsTo(q, '/baskets/validate')).toBe(1);
    const stored = JSON.parse(q.sql.prepare<[], { data: string }>("SELECT data FROM entities WHERE source = 'baskets'").get()!.data);
    expect(stored).toMatchObject({ basket: 'rates-hedge', timeframe: '1m', total_stake_usd: 300, calendar_clashes: 0, duplicate_underliers: 0 });
    for (const field of ['total_return', 'annualized_return', 'max_drawdown', 'win_rate', 'first_nav', 'final_nav', 'observation_count', 'max_leg_pct']) {
      expect(typeof stored[field], field).toBe('number');
    }
    expect(stored.warnings).not.toContain('two legs close within 7 days');

    refreshWith(q, { [y!]: { close_time: closeIn(23) } });
    const appeared = (await q.poll()).alerts;
    expect(appeared.map((a) => [a.rule, a.entity, a.summary])).toEqual([['hedge-warnings', 'rates-hedge', 'rates-hedge: new warning: two legs close within 7 days']]);
    expect(appeared[0]!.changes[0]).toMatchObject({ field: 'warnings', added: ['two legs close within 7 days'] });
    expect(appeared[0]!.changes).toContainEqual({ field: 'calendar_clashes', from: 0, to: 1 });
    // Exactly once: polling the same data again, after a restart too, fires nothing.
    await q.restart();
    expect((await q.poll()).alerts).toEqual([]);

    refreshWith(q, { [y!]: { close_time: closeIn(50) } });
    expect((await q.poll()).alerts).toEqual([]);
    refreshWith(q, { [y!]: { close_time: closeIn(24) } });
    expect((await q.poll()).alerts.map((a) => a.summary)).toEqual(['rates-hedge: new warning: two legs close within 7 days']);
    expect(firedBy(q, 'hedge-warnings')).toHaveLength(2);
  });
});

describe('markets', () => {
  it("fires moves on a market's price after a baseline, its prices in cents", async () => {
    const p = await start('');
    const event = venueaEvents(p)[0]!;
    await p.close();
    const q = await start(`
rules:
  - { name: event-prices, source: markets, query: { event_ticker: ${event} }, trigger: { type: moves, field: last_price, by: 0.2 }, notify: [screen] }
`);
    expect((await q.poll()).alerts).toEqual([]);
    const primary = q.sql
      .prepare<[], { entity_key: string; data: string }>("SELECT entity_key, data FROM entities WHERE source LIKE 'markets?%' AND (entity_key LIKE '%-O1' OR entity_key LIKE '%-YES')")
      .get()!;
    const price = JSON.parse(primary.data).last_price as number;
    const to = price < 0.5 ? 95 : 5;
    // The primary market is priced at the event's market probability.
    refreshWith(q, { [event]: { market_probability: to } });
    // The other outcomes of the event may move too.
    const moved = (await q.poll()).alerts.filter((a) => a.entity === primary.entity_key);
    expect(moved.map((a) => [a.rule, a.trigger])).toEqual([['event-prices', 'moves']]);
    expect(moved[0]!.summary).toContain(`: last_price ${Math.round(price * 1000) / 10}¢ -> ${to}¢ (${to > price * 100 ? '+' : '-'}`);
  });

  it('reads a query that matches thousands to its page budget, with a notice, not a failure', async () => {
    const p = await start(`
rules:
  - { name: kx-markets, source: markets, query: { series_prefix: KX, limit: 10 }, trigger: { type: new }, notify: [screen] }
`);
    p.sandbox.requests.length = 0;
    const report = await p.poll();
    expect(report.failures).toEqual([]);
    expect(requestsTo(p, '/markets')).toBe(5);
    expect(p.sql.prepare("SELECT count(*) AS n FROM entities WHERE source LIKE 'markets?%'").get()).toEqual({ n: 50 });
    expect(report.results.find((r) => r.source === 'markets')?.notices).toEqual([
      'markets: rule "kx-markets": the query matches more than 5 pages of markets: only those are watched; narrow it',
    ]);
  });
});
