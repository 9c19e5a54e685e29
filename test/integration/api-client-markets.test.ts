// The market-search methods of the API client against the sandbox over HTTP: every endpoint,
// cursor pages, the model edge split into requests of at most 100 tickers, and the `{detail}`
// errors (400 and 422 not retried, 503 retried until the nightly sync completes, the key redacted).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError, createApiClient, type ApiClient, type ApiClientOptions, type RequestInfo } from '../../src/api/index.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';

const KEY = 'sandbox-key-51c0de';
const VENUE = '/v1/predictions/venuea';

let sandbox: Sandbox;
const clients: ApiClient[] = [];

beforeEach(async () => {
  sandbox = await startSandbox({ seed: 11, events: 60, apiKey: KEY });
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await sandbox.close();
});

function client(options: Partial<ApiClientOptions> = {}): ApiClient {
  const c = createApiClient({ baseUrl: sandbox.url, apiKey: KEY, backoffBaseMs: 1, maxBackoffMs: 5, ...options });
  clients.push(c);
  return c;
}

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    return err as ApiError;
  }
  throw new Error('expected a rejection');
}

async function collect<P extends { rows: unknown[] }>(pages: AsyncIterable<P>): Promise<{ pages: P[]; rows: P['rows'] }> {
  const all: P[] = [];
  for await (const page of pages) all.push(page);
  return { pages: all, rows: all.flatMap((p) => p.rows) };
}

const requestsTo = (path: string) => sandbox.requests.filter((r) => r.path === path);
const venueaEvents = () => sandbox.world.eventTickers().filter((t) => sandbox.world.eventVenue(t) === 'venuea');

describe('market search client against the sandbox', () => {
  it('walks every page of the markets search, each market once', async () => {
    const { pages, rows } = await collect(client().marketPages({ limit: 40 }));
    const tickers = rows.map((r) => r.market_ticker);
    expect(new Set(tickers).size).toBe(tickers.length);
    expect([...tickers].sort()).toEqual([...sandbox.world.marketTickers()].sort());
    expect(pages.length).toBe(Math.ceil(tickers.length / 40));
    expect(pages.length).toBeGreaterThan(2);
    const calls = requestsTo(`${VENUE}/markets`);
    expect(calls).toHaveLength(pages.length);
    expect(calls.slice(1).every((r) => JSON.parse(Buffer.from(r.query['cursor']!, 'base64').toString()).offset > 0)).toBe(true);
    const row = rows[0]!;
    expect(row.market_ticker.startsWith(`${row.event_ticker}-`)).toBe(true);
    expect(row.last_price).toBeGreaterThan(0);
    expect(row.last_price).toBeLessThan(1);
  });

  it('passes every search parameter through: text, category, sort and limit', async () => {
    const { rows } = await collect(client().marketPages({ q: 'bitcoin price', category: 'crypto', sort_by: 'last_price', limit: 5 }));
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r.category === 'crypto' && /bitcoin|price/i.test(r.title))).toBe(true);
    for (let i = 1; i < rows.length; i++) expect(rows[i - 1]!.last_price).toBeGreaterThanOrEqual(rows[i]!.last_price);
    expect(requestsTo(`${VENUE}/markets`)[0]!.query).toMatchObject({ q: 'bitcoin price', category: 'crypto', sort_by: 'last_price', limit: '5' });
  });

  it('refuses a search text under 3 characters at once, without a request (the API would answer a retryable 503)', async () => {
    const err = await rejection(collect(client().marketPages({ q: 'ab' })));
    expect(err).toMatchObject({ code: 'invalid_request', retryable: false, resource: 'markets search' });
    expect(err.message).toBe('markets search: q must be at least 3 characters, got "ab"');
    await rejection(client().similarMarkets({ q: 'x' }));
    expect(sandbox.requests).toHaveLength(0);
  });

  it('reads similar markets by anchor and by text', async () => {
    const c = client();
    const anchor = sandbox.world.marketTickers()[0]!;
    const byAnchor = await c.similarMarkets({ anchor_ticker: anchor, top_k: 5 });
    expect(byAnchor).toMatchObject({ anchor_ticker: anchor, anchor_query: null });
    expect(byAnchor.data).toHaveLength(5);
    expect(byAnchor.data.map((r) => r.market_ticker)).not.toContain(anchor);
    for (let i = 1; i < 5; i++) expect(byAnchor.data[i - 1]!.distance).toBeLessThanOrEqual(byAnchor.data[i]!.distance);

    const byText = await c.similarMarkets({ q: 'fed rate decision', top_k: 3 });
    expect(byText).toMatchObject({ anchor_ticker: null, anchor_query: 'fed rate decision' });
    expect(byText.data).toHaveLength(3);
  });

  it('reads the thematic and behavioral peers of a market', async () => {
    const c = client();
    const anchor = sandbox.world.marketTickers()[0]!;
    const thematic = await c.clusterPeers(anchor, { limit: 3 });
    expect(thematic).toMatchObject({ market_ticker: anchor, kind: 'thematic', cluster: { cluster_id: expect.any(Number), label: expect.any(String) } });
    expect(thematic.data.length).toBeGreaterThan(0);
    expect(thematic.data.length).toBeLessThanOrEqual(3);
    const series = anchor.split('-')[0]!;
    expect(thematic.data.every((p) => p.market_ticker.startsWith(`${series}-`))).toBe(true);
    const behavioral = await c.clusterPeers(anchor, { kind: 'behavioral' });
    expect(behavioral.kind).toBe('behavioral');
    expect(behavioral.cluster.size).toBe(behavioral.data.length + 1);
  });

  it('walks every page of the edge ranking, best edge first, all of one scoring run', async () => {
    const { pages, rows } = await collect(client().marketsWithEdgePages({ limit: 7 }));
    expect(pages.length).toBeGreaterThan(2);
    expect(new Set(pages.map((p) => p.runId)).size).toBe(1);
    expect(pages[0]!.sortBy).toBe('edge_pp');
    for (let i = 1; i < rows.length; i++) expect(rows[i - 1]!.edge_pp!).toBeGreaterThanOrEqual(rows[i]!.edge_pp!);
    expect(new Set(rows.map((r) => r.event_ticker)).size).toBe(rows.length);
  });

  it('splits the model edge of 100+ tickers into requests of at most 100 and merges the rows in order', async () => {
    const seen: RequestInfo[] = [];
    const c = client({ onRequest: (info) => seen.push(info) });
    const markets = sandbox.world.marketTickers();
    const tickers = [...markets, ...venueaEvents(), ...markets.slice(0, 30)];
    expect(tickers.length).toBeGreaterThan(200);
    const edge = await c.edge(tickers);
    const posts = seen.filter((r) => r.method === 'POST' && r.path === '/predictions/venuea/markets/edge');
    expect(posts).toHaveLength(Math.ceil(tickers.length / 100));
    expect(posts.every((r) => r.status === 200)).toBe(true);
    expect(edge.data.map((r) => r.input_ticker)).toEqual(tickers);
    const market = edge.data[0]!;
    expect(market.market_ticker).toBe(tickers[0]);
    expect(tickers[0]!.startsWith(`${market.event_ticker}-`)).toBe(true);
    const event = edge.data[markets.length]!;
    expect(event).toMatchObject({ input_ticker: venueaEvents()[0], event_ticker: venueaEvents()[0], market_ticker: null });
    expect(edge.run_id).toEqual(expect.any(String));
    expect(await c.edge([])).toEqual({ run_id: null, captured_at: null, data: [] });
  });

  it('keeps every edge row of one call in one scoring run, even when the nightly refresh lands between its requests', async () => {
    const tickers = venueaEvents();
    const filler = sandbox.world.marketTickers().slice(0, 200 - tickers.length);
    const moved = tickers[tickers.length - 1]!;
    const before = (await client().edge([moved])).data[0]!.edge_pp!;
    let refreshed = false;
    const c = client({
      onRequest: () => {
        if (refreshed) return;
        refreshed = true;
        sandbox.advance(1);
        sandbox.world.updateEvent(moved, { edge_pp: before + 20 });
        sandbox.world.refreshMarkets();
      },
    });
    // 200 tickers: the moved event is in the second request.
    const edge = await c.edge([...filler, ...tickers.slice(0, -1), moved].slice(-200));
    expect(refreshed).toBe(true);
    expect(edge.data[edge.data.length - 1]!.edge_pp).toBe(before);
    expect((await c.edge([moved])).data[0]!.edge_pp).toBe(before + 20);
  });

  it('backtests a basket from the world prices', async () => {
    const [a, b] = sandbox.world.marketTickers();
    const result = await client().basketBacktest({ market_tickers: [a!, b!, 'NOPE-26JAN01-YES'], weights: [2, 1, 1], timeframe: '1m' });
    expect(result).toMatchObject({ timeframe: '1m', interval_source: '1h', tickers: [a, b], missing: ['NOPE-26JAN01-YES'] });
    expect(result.candles.length).toBeGreaterThanOrEqual(59);
    expect(result.summary.first_nav).toBe(1);
    expect(result.summary.final_nav).toBe(result.candles[result.candles.length - 1]!.close);
    expect(result.summary.observation_count).toBe(result.candles.length + 1);
    expect(result.summary.max_drawdown).toBeLessThanOrEqual(0);
  });

  it('validates a basket: stake, clusters, correlations and warnings', async () => {
    const [a, b, c3] = sandbox.world.marketTickers();
    const result = await client().basketValidate({
      legs: [{ market_ticker: a!, stake_usd: 300 }, { market_ticker: b!, side: 'no', stake_usd: 100 }, { market_ticker: c3!, stake_usd: 100 }],
      bankroll_usd: 1000,
      max_pairwise_correlation: -1,
    });
    expect(result).toMatchObject({ total_stake_usd: 500, bankroll_usd: 1000, max_leg_pct: 30, unassigned_market_tickers: [] });
    expect(result.pairwise_correlations).toHaveLength(3);
    expect(result.warnings).toContain('a leg is over 25% of the bankroll');
    expect(result.warnings.some((w) => w.startsWith('high correlation between '))).toBe(true);
  });
});

describe('market search client errors ({detail})', () => {
  it('reads a 400 without retrying it', async () => {
    const anchor = sandbox.world.marketTickers()[0]!;
    const err = await rejection(client().similarMarkets({ anchor_ticker: anchor, q: 'fed rate' }));
    expect(err).toMatchObject({ status: 400, code: 'http_400', retryable: false, resource: 'similar markets' });
    expect(err.apiMessage).toBe('exactly one of anchor_ticker and q is required');
    expect(sandbox.requests).toHaveLength(1);
  });

  it('reads a 422 naming what was invalid, without retrying it', async () => {
    const tickers = Array.from({ length: 101 }, (_, i) => `KX-${i}`);
    const err = await rejection(client().basketBacktest({ market_tickers: tickers }));
    expect(err).toMatchObject({ status: 422, code: 'http_422', retryable: false, resource: 'basket backtest' });
    expect(err.message).toMatch(/^basket backtest: http_422 \(HTTP 422\): market_tickers: .*100/);
    const limit = await rejection(collect(client().marketPages({ limit: 500 })));
    expect(limit.apiMessage).toBe('limit must be an integer between 1 and 200');
    expect(sandbox.requests).toHaveLength(2);
  });

  it('reads a 422 whose detail is a list of {loc, msg} as field: message', async () => {
    const detail = [
      { loc: ['body', 'tickers', 0], msg: 'str type expected', type: 'type_error.str' },
      { loc: ['body', 'run_id'], msg: 'value is not a valid uuid', type: 'type_error.uuid' },
    ];
    sandbox.inject({ path: `${VENUE}/markets/edge`, status: 422, body: JSON.stringify({ detail }) });
    const err = await rejection(client().edge(['KX-1'], 'not-a-run'));
    expect(err.apiMessage).toBe('body.tickers.0: str type expected; body.run_id: value is not a valid uuid');
    expect(err.retryable).toBe(false);
  });

  it('retries a 503 while the nightly sync runs, and succeeds once it completed', async () => {
    sandbox.advance(30);
    const statuses: Array<number | undefined> = [];
    const c = client({
      onRequest: (info) => {
        statuses.push(info.status);
        if (info.status === 503) sandbox.advance(0.5);
      },
    });
    const { rows } = await collect(c.marketsWithEdgePages());
    expect(rows.length).toBeGreaterThan(0);
    expect(statuses).toEqual([503, 503, 200]);
  });

  it('gives up on a 503 after its retries, reporting the detail as retryable', async () => {
    sandbox.advance(30);
    const err = await rejection(client({ retries: 2 }).edge(['KX-1']));
    expect(err).toMatchObject({ status: 503, code: 'http_503', retryable: true, resource: 'model edge' });
    expect(err.apiMessage).toMatch(/nightly sync has not completed/);
    expect(requestsTo(`${VENUE}/markets/edge`)).toHaveLength(3);
  });

  it('never lets the key out of a {detail} that echoes it', async () => {
    sandbox.inject({ path: `${VENUE}/markets/similar`, status: 422, body: JSON.stringify({ detail: `bad header: Bearer ${KEY}` }) });
    const err = await rejection(client().similarMarkets({ q: 'fed rate' }));
    expect(err.apiMessage).toBe('bad header: Bearer [redacted]');
    expect(`${err.message} ${JSON.stringify(err)}`).not.toContain(KEY);
  });
});
