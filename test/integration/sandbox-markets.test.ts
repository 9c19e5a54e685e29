// The sandbox's market-search endpoints over HTTP: the document's shapes, base64 JSON cursors,
// 400/422/503 in the `{detail}` envelope, data that moves only at the nightly refresh, and
// baskets computed from the world's prices with warnings that come and go.
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import type { Json } from '../helpers/json.ts';

const started: Sandbox[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.close()));
});

async function sandbox(options: Parameters<typeof startSandbox>[0] = {}): Promise<Sandbox> {
  const s = await startSandbox({ seed: 5, ...options });
  started.push(s);
  return s;
}

async function get(s: Sandbox, path: string): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${s.url}/predictions/venuea${path}`, { headers: { authorization: 'Bearer k' } });
  return { status: res.status, body: (await res.json()) as Json };
}

async function post(s: Sandbox, path: string, body: unknown): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${s.url}/predictions/venuea${path}`, {
    method: 'POST',
    headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Json };
}

const decode = (cursor: string): unknown => JSON.parse(Buffer.from(cursor, 'base64').toString('utf8'));

describe('sandbox markets search', () => {
  it('serves every market of the venuea events as market rows, in pages with base64 JSON cursors', async () => {
    const s = await sandbox();
    const rows: Json[] = [];
    let cursor: string | null = null;
    do {
      const page: Json = (await get(s, `/markets?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)).body;
      expect(page.has_more).toBe(page.next_cursor !== null);
      if (page.next_cursor) expect(decode(page.next_cursor)).toEqual({ offset: rows.length + page.data.length });
      rows.push(...page.data);
      cursor = page.next_cursor;
    } while (cursor);
    const events = s.world.eventTickers().filter((t) => s.world.eventVenue(t) === 'venuea');
    expect(new Set(rows.map((r) => r.event_ticker))).toEqual(new Set(events));
    expect(rows.map((r) => r.market_ticker).sort()).toEqual([...s.world.marketTickers()].sort());
    for (const r of rows) {
      expect(r.market_ticker).toMatch(new RegExp(`^${r.event_ticker}-(O\\d|YES)$`));
      expect(Object.keys(r).sort()).toEqual([
        'category', 'close_time', 'event_name', 'event_ticker', 'last_price', 'liquidity', 'market_ticker', 'no_ask', 'no_bid',
        'open_interest', 'series_ticker', 'status', 'subtitle', 'title', 'volume', 'volume_24h', 'yes_ask', 'yes_bid',
      ]);
      expect(r.yes_bid).toBeLessThanOrEqual(r.yes_ask);
    }
    // Default order: most traded in 24 h first.
    for (let i = 1; i < rows.length; i++) expect(rows[i - 1]!.volume_24h).toBeGreaterThanOrEqual(rows[i]!.volume_24h);
  });

  it('matches the event detail: the primary market is priced at the event market probability', async () => {
    const s = await sandbox();
    const event = s.world.eventTickers().find((t) => s.world.eventVenue(t) === 'venuea')!;
    const detail = (await (await fetch(`${s.url}/predictions/events/${event}`, { headers: { authorization: 'Bearer k' } })).json()) as Json;
    const rows = (await get(s, `/markets?event_ticker=${event}`)).body.data as Json[];
    expect(rows.map((r) => r.market_ticker).sort()).toEqual(detail.markets.map((m: Json) => m.market_ticker).sort());
    const primary = rows.find((r) => r.market_ticker === detail.markets[0].market_ticker)!;
    expect(primary.last_price).toBeCloseTo(detail.market_probability / 100, 6);
    expect(primary.volume_24h).toBe(detail.markets[0].volume_24h);
  });

  it('filters by text, category, series and close time, and sorts as asked', async () => {
    const s = await sandbox();
    const text = (await get(s, '/markets?q=bitcoin&limit=200')).body.data as Json[];
    expect(text.length).toBeGreaterThan(0);
    expect(text.every((r) => r.series_ticker === 'KXBTC')).toBe(true);
    const crypto = (await get(s, '/markets?category=crypto&series_prefix=KXE&sort_by=close_time&limit=200')).body.data as Json[];
    expect(crypto.length).toBeGreaterThan(0);
    expect(crypto.every((r) => r.category === 'crypto' && r.series_ticker.startsWith('KXE'))).toBe(true);
    for (let i = 1; i < crypto.length; i++) expect(crypto[i - 1]!.close_time <= crypto[i]!.close_time).toBe(true);
    const soon = '2026-12-01T00:00:00Z';
    const closing = (await get(s, `/markets?close_before=${soon}&min_volume_24h=1000&limit=200`)).body.data as Json[];
    expect(closing.every((r) => r.close_time <= soon && r.volume_24h >= 1000)).toBe(true);
  });

  it('answers bad parameters 400, out-of-range values 422 and a short text 503, all as {detail}', async () => {
    const s = await sandbox();
    const cases: Array<[string, number, string]> = [
      ['/markets?nope=1', 400, 'Unknown query parameter: nope'],
      ['/markets?sort_by=edge', 400, 'sort_by must be one of volume_24h, close_time, last_price'],
      ['/markets?limit=0', 422, 'limit must be an integer between 1 and 200'],
      ['/markets?min_volume_24h=lots', 422, 'min_volume_24h must be a number'],
      ['/markets?q=ab', 503, 'q must be at least 3 characters'],
      ['/markets/similar?top_k=5', 400, 'exactly one of anchor_ticker and q is required'],
      ['/markets/similar?q=fed%20rate&top_k=101', 422, 'top_k must be an integer between 1 and 100'],
      ['/markets/similar?anchor_ticker=NOPE-1', 404, 'Market NOPE-1 not found'],
      ['/markets/NOPE-1/cluster-peers', 404, 'Market NOPE-1 not found'],
      [`/markets/${(await sandbox()).world.marketTickers()[0]}/cluster-peers?kind=social`, 400, 'kind must be one of thematic, behavioral'],
      ['/markets-with-edge?sort_by=rank', 400, 'sort_by must be one of edge_pp, expected_return, total_volume, model_probability'],
      ['/markets-with-edge?run_id=abc', 422, 'run_id must be a UUID'],
    ];
    for (const [path, status, detail] of cases) {
      const res = await get(s, path);
      expect({ path, status: res.status, body: res.body }).toEqual({ path, status, body: { detail } });
    }
  });
});

describe('sandbox similar markets and cluster peers', () => {
  it('ranks markets like an anchor or a text by distance, the anchor excluded, top_k at most', async () => {
    const s = await sandbox();
    const anchor = s.world.marketTickers().find((t) => t.startsWith('KXFED-')) ?? s.world.marketTickers()[0]!;
    const res = (await get(s, `/markets/similar?anchor_ticker=${anchor.toLowerCase()}&top_k=10`)).body;
    expect(res).toMatchObject({ anchor_ticker: anchor, anchor_query: null });
    expect(res.data).toHaveLength(10);
    expect(res.data.map((r: Json) => r.market_ticker)).not.toContain(anchor);
    for (const r of res.data) expect(Object.keys(r).sort()).toEqual(['category', 'distance', 'event_ticker', 'market_ticker', 'title']);
    for (let i = 1; i < 10; i++) expect(res.data[i - 1].distance).toBeLessThanOrEqual(res.data[i].distance);
    // The closest are of the anchor's own series.
    expect(res.data[0].market_ticker.split('-')[0]).toBe(anchor.split('-')[0]);

    const text = (await get(s, '/markets/similar?q=Bitcoin%20price&top_k=3&category=crypto')).body;
    expect(text).toMatchObject({ anchor_ticker: null, anchor_query: 'Bitcoin price' });
    expect(text.data.every((r: Json) => r.category === 'crypto')).toBe(true);
  });

  it('lists the peers of a market in its thematic cluster (its series) and behavioral cluster', async () => {
    const s = await sandbox();
    const anchor = s.world.marketTickers()[0]!;
    const thematic = (await get(s, `/markets/${anchor}/cluster-peers`)).body;
    expect(thematic).toMatchObject({ market_ticker: anchor, kind: 'thematic', cluster: { cluster_id: expect.any(Number), label: expect.any(String), description: expect.any(String) } });
    const series = anchor.split('-')[0]!;
    const sameSeries = s.world.marketTickers().filter((t) => t.split('-')[0] === series);
    expect(thematic.cluster.size).toBe(sameSeries.length);
    expect(thematic.data.map((p: Json) => p.market_ticker).sort()).toEqual(sameSeries.filter((t) => t !== anchor).sort());
    const limited = (await get(s, `/markets/${anchor}/cluster-peers?kind=behavioral&limit=2`)).body;
    expect(limited.kind).toBe('behavioral');
    expect(limited.data.length).toBeLessThanOrEqual(2);
    expect(limited.data.every((p: Json) => typeof p.distance === 'number' && typeof p.title === 'string')).toBe(true);
  });

  it('gives markets of events added later no behavioral cluster yet (too little history): 404', async () => {
    const s = await sandbox();
    const added = s.world.addEvent();
    s.advance(1);
    s.world.refreshMarkets();
    const market = s.world.marketTickers().find((t) => t.startsWith(`${added}-`))!;
    expect((await get(s, `/markets/${market}/cluster-peers`)).status).toBe(200);
    const res = await get(s, `/markets/${market}/cluster-peers?kind=behavioral`);
    expect(res).toEqual({ status: 404, body: { detail: `Market ${market} has no behavioral cluster in the current run` } });
  });
});

describe('sandbox nightly refresh', () => {
  it('moves edges and prices only at the refresh, answering 503 while it syncs', async () => {
    const s = await sandbox();
    const before = (await get(s, '/markets-with-edge?limit=200')).body;
    expect(before.captured_at).toBe('2026-11-20T12:00:00Z');
    const moved = before.data[before.data.length - 1].event_ticker;
    s.advance(5);
    s.world.updateEvent(moved, { edge_pp: 40 });
    const still = (await get(s, '/markets-with-edge?limit=200')).body;
    expect(still.run_id).toBe(before.run_id);
    expect(still.data).toEqual(before.data);

    s.advance(25);
    const syncing = await get(s, '/markets-with-edge');
    expect(syncing).toEqual({ status: 503, body: { detail: 'Search data unavailable: the nightly sync has not completed; try again in a few minutes' } });
    expect((await post(s, '/markets/edge', { tickers: [moved] })).status).toBe(503);

    s.advance(1);
    const after = (await get(s, '/markets-with-edge?limit=200')).body;
    expect(after.captured_at).toBe('2026-11-20T12:30:00Z');
    expect(after.run_id).not.toBe(before.run_id);
    expect(after.data[0]).toMatchObject({ event_ticker: moved, edge_pp: 40 });
  });

  it('serves an earlier scoring run by its run_id for a day, and 404 for a run it never had', async () => {
    const s = await sandbox();
    const ticker = s.world.eventTickers().find((t) => s.world.eventVenue(t) === 'venuea')!;
    const first = (await post(s, '/markets/edge', { tickers: [ticker] })).body;
    s.advance(1);
    s.world.updateEvent(ticker, { edge_pp: -33 });
    s.world.refreshMarkets();
    const current = (await post(s, '/markets/edge', { tickers: [ticker] })).body;
    expect(current.run_id).not.toBe(first.run_id);
    expect(current.data[0].edge_pp).toBe(-33);
    const pinned = (await post(s, '/markets/edge', { tickers: [ticker], run_id: first.run_id })).body;
    expect(pinned).toEqual(first);
    const ranking = (await get(s, `/markets-with-edge?run_id=${first.run_id}&limit=200`)).body;
    expect(ranking.run_id).toBe(first.run_id);
    expect(ranking.data.find((r: Json) => r.event_ticker === ticker).edge_pp).toBe(first.data[0].edge_pp);
    const unknown = await post(s, '/markets/edge', { tickers: [ticker], run_id: '00000000-0000-4000-8000-000000000000' });
    expect(unknown).toEqual({ status: 404, body: { detail: 'Scoring run 00000000-0000-4000-8000-000000000000 not found' } });
  });

  it('shows a change after refreshMarkets, even made at the simulated instant of the data it replaces', async () => {
    const s = await sandbox();
    const ticker = s.world.eventTickers().find((t) => s.world.eventVenue(t) === 'venuea')!;
    const before = (await post(s, '/markets/edge', { tickers: [ticker] })).body.data[0].edge_pp;
    s.world.updateEvent(ticker, { edge_pp: before + 7 });
    expect((await post(s, '/markets/edge', { tickers: [ticker] })).body.data[0].edge_pp).toBe(before);
    s.world.refreshMarkets();
    expect((await post(s, '/markets/edge', { tickers: [ticker] })).body.data[0].edge_pp).toBe(before + 7);
  });

  it('resolves market and event tickers to their event in the model edge, dropping unknown ones; 422 on a bad body', async () => {
    const s = await sandbox();
    const market = s.world.marketTickers()[3]!;
    const event = market.slice(0, market.lastIndexOf('-'));
    const edge = (await post(s, '/markets/edge', { tickers: [market.toLowerCase(), event, 'NOPE-26JAN01', `${event}-O9`] })).body;
    expect(edge.data.map((r: Json) => [r.input_ticker, r.market_ticker, r.event_ticker])).toEqual([
      [market.toLowerCase(), market, event],
      [event, null, event],
    ]);
    expect(edge.data[0]).toMatchObject({ status: 'scored', captured_at: expect.any(String), confidence_score: expect.any(Number) });
    const tooMany = await post(s, '/markets/edge', { tickers: Array.from({ length: 101 }, (_, i) => `T${i}`) });
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.detail).toMatch(/^tickers: .*100/);
  });

  it('is the same in a world resumed at the same time', async () => {
    const ran = await sandbox({ seed: 9 });
    for (let i = 0; i < 50; i++) ran.advance(1.5);
    const resumed = await sandbox({ seed: 9, startTime: ran.startTime, resumeAt: ran.now() });
    const ranking = async (s: Sandbox) => (await get(s, '/markets-with-edge?limit=200')).body;
    const markets = async (s: Sandbox) => (await get(s, '/markets?limit=200')).body;
    expect(await ranking(resumed)).toEqual(await ranking(ran));
    expect(await markets(resumed)).toEqual(await markets(ran));
  });
});

describe('sandbox baskets', () => {
  it('backtests a basket over each timeframe with NAV candles and the summary the document defines', async () => {
    const s = await sandbox();
    const [a, b] = s.world.marketTickers();
    const expected: Record<string, [number, string]> = { '1w': [56, '1h'], '1m': [60, '1h'], '3m': [90, '1d'], '6m': [60, '1d'], '1y': [52, '1d'] };
    for (const [timeframe, [bins, source]] of Object.entries(expected)) {
      const res = (await post(s, '/baskets/backtest', { market_tickers: [a, b], timeframe })).body;
      expect(res).toMatchObject({ timeframe, interval_source: source, tickers: [a, b], missing: [] });
      expect(Math.abs(res.candles.length - bins)).toBeLessThanOrEqual(1);
      for (const c of res.candles) expect(c.low <= Math.min(c.open, c.close) && c.high >= Math.max(c.open, c.close)).toBe(true);
      const closes = [res.candles[0].open, ...res.candles.map((c: Json) => c.close)];
      const summary = res.summary;
      expect(summary.first_nav).toBe(1);
      expect(summary.final_nav).toBe(closes[closes.length - 1]);
      expect(summary.total_return).toBeCloseTo(summary.final_nav - 1, 6);
      expect(summary.observation_count).toBe(closes.length);
      expect(summary.max_drawdown).toBeLessThanOrEqual(0);
      expect(summary.win_rate).toBeGreaterThanOrEqual(0);
      expect(summary.win_rate).toBeLessThanOrEqual(1);
    }
    const year = (await post(s, '/baskets/backtest', { market_tickers: [a] })).body;
    expect(year.timeframe).toBe('1y');
  });

  it('computes the NAV from the world prices: the basket of one market follows its price', async () => {
    const s = await sandbox();
    const market = s.world.marketTickers().find((t) => t.endsWith('-O1') || t.endsWith('-YES'))!;
    const event = market.slice(0, market.lastIndexOf('-'));
    const price = (await get(s, `/markets?event_ticker=${event}`)).body.data.find((r: Json) => r.market_ticker === market).last_price;
    s.advance(1);
    s.world.updateEvent(event, { market_probability: Math.round(price * 50 * 10) / 10 });
    s.world.refreshMarkets();
    const after = (await post(s, '/baskets/backtest', { market_tickers: [market], timeframe: '1w' })).body;
    // The last bin opened at 12:00, before the price halved, and closes after it: so did its NAV.
    const last = after.candles[after.candles.length - 1];
    expect(new Date(last.time * 1000).toISOString()).toBe('2026-11-20T12:00:00.000Z');
    expect(last.close / last.open).toBeCloseTo(0.5, 2);
    expect(last.close).toBe(after.summary.final_nav);
    expect(after.summary.total_return).toBeCloseTo(after.summary.final_nav - 1, 6);
  });

  it('answers 400 on a timeframe or weights of the wrong length, 422 on a bad body, and reports unknown tickers missing', async () => {
    const s = await sandbox();
    const [a, b] = s.world.marketTickers();
    expect(await post(s, '/baskets/backtest', { market_tickers: [a], timeframe: '2w' })).toEqual({ status: 400, body: { detail: 'timeframe must be one of 1w, 1m, 3m, 6m, 1y' } });
    expect(await post(s, '/baskets/backtest', { market_tickers: [a, b], weights: [1] })).toEqual({ status: 400, body: { detail: 'weights and market_tickers must have the same length' } });
    expect(await post(s, '/baskets/backtest', { market_tickers: [a, b], weights: [1, -1] })).toEqual({ status: 422, body: { detail: 'weights must sum to a positive value' } });
    const empty = await post(s, '/baskets/backtest', { market_tickers: [] });
    expect(empty.status).toBe(422);
    expect(empty.body.detail).toMatch(/^market_tickers: /);
    expect((await post(s, '/baskets/backtest', { market_tickers: [a, 'NOPE-1'] })).body).toMatchObject({ tickers: [a], missing: ['NOPE-1'] });
    expect(await post(s, '/baskets/backtest', { market_tickers: ['NOPE-1'] })).toEqual({ status: 422, body: { detail: 'market_tickers: no price data for any of NOPE-1' } });
  });

  it('validates a basket: stakes, cluster maps, side-flipped correlations, clashes and duplicate underliers', async () => {
    const s = await sandbox();
    const [a, b] = s.world.marketTickers().filter((t) => t.endsWith('-O1') && s.world.marketTickers().includes(t.replace(/O1$/, 'O2')));
    const a2 = a!.replace(/O1$/, 'O2');
    const legs = [
      { market_ticker: a, stake_usd: 200 },
      { market_ticker: a2, side: 'no', stake_usd: 100 },
      { market_ticker: b, stake_usd: 100 },
      { market_ticker: 'NOPE-1', stake_usd: 100 },
    ];
    const res = (await post(s, '/baskets/validate', { legs, max_pairwise_correlation: 1 })).body;
    expect(res).toMatchObject({ total_stake_usd: 500, bankroll_usd: null, max_leg_pct: 40, unassigned_market_tickers: ['NOPE-1'] });
    expect(res.duplicate_underliers).toEqual([{ event_ticker: a!.slice(0, -3), market_tickers: [a, a2] }]);
    expect(res.calendar_clashes[0].market_tickers).toEqual(expect.arrayContaining([a, a2]));
    expect(res.warnings).toEqual(expect.arrayContaining(['two legs on one event: ' + a!.slice(0, -3), 'unknown market: NOPE-1']));
    expect(res.warnings.some((w: string) => w.startsWith('high correlation'))).toBe(false);
    expect(Object.values(res.cluster_breakdown_thematic).flat().sort()).toEqual([a, a2, b].sort());
    expect(res.pairwise_correlations).toHaveLength(3);
    expect(res.max_pairwise_correlation).toBe(Math.max(...res.pairwise_correlations.map((p: Json) => Math.abs(p.correlation))));

    // A NO leg flips the sign of its correlations.
    const yes = (await post(s, '/baskets/validate', { legs: [legs[0], { ...legs[1], side: 'yes' }] })).body;
    const no = (await post(s, '/baskets/validate', { legs: [legs[0], legs[1]] })).body;
    expect(no.pairwise_correlations[0].correlation).toBeCloseTo(-yes.pairwise_correlations[0].correlation, 4);

    const bad = await post(s, '/baskets/validate', { legs: [{ market_ticker: a, side: 'maybe', stake_usd: 1 }] });
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toMatch(/^legs\.0\.side: /);
    expect((await post(s, '/baskets/validate', { legs: [] })).status).toBe(422);
    expect((await post(s, '/baskets/validate', { legs: [legs[0]], calendar_clash_window_days: 91 })).status).toBe(422);
  });

  it('raises a calendar-clash warning that disappears and reappears as close times move', async () => {
    const s = await sandbox();
    const [x, y] = s.world.eventTickers().filter((t) => s.world.eventVenue(t) === 'venuea' && s.world.marketTickers().includes(`${t}-O1`));
    const legs = [{ market_ticker: `${x}-O1`, stake_usd: 100 }, { market_ticker: `${y}-O1`, stake_usd: 100 }];
    const warnings = async (): Promise<string[]> => (await post(s, '/baskets/validate', { legs })).body.warnings;
    const closeAt = (ticker: string, days: number) => s.world.updateEvent(ticker, { close_time: new Date(s.now().getTime() + days * 86_400_000).toISOString() });
    closeAt(x!, 20);
    closeAt(y!, 23);
    expect(await warnings()).toContain('two legs close within 7 days');
    closeAt(y!, 40);
    expect(await warnings()).not.toContain('two legs close within 7 days');
    closeAt(y!, 26);
    expect(await warnings()).toContain('two legs close within 7 days');
  });

  it('changes a basket\'s warnings as the world moves on its own', async () => {
    const s = await sandbox({ seed: 3 });
    const legs = s.world.marketTickers().filter((_, i) => i % 17 === 0).slice(0, 6).map((market_ticker) => ({ market_ticker, stake_usd: 100 }));
    const seen = new Set<string>();
    for (let refresh = 0; refresh < 48 && seen.size < 2; refresh++) {
      const res = await post(s, '/baskets/validate', { legs, max_pairwise_correlation: 0.6 });
      expect(res.status).toBe(200);
      seen.add(JSON.stringify(res.body.warnings));
      s.advance(30);
      s.advance(1); // past the sync
    }
    expect(seen.size).toBeGreaterThanOrEqual(2);
  });
});
