// The API client against the sandbox over real HTTP: every method, pagination, the error
// envelopes, injected faults (retries, timeouts) and schema checks on patched rows.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient, type ApiClientOptions, type EventRow } from '../../src/api/index.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { rejection } from '../helpers/api-errors.ts';

const KEY = 'sandbox-key-7f3a9c';

let sandbox: Sandbox;
const clients: ApiClient[] = [];

beforeEach(async () => {
  sandbox = await startSandbox({ seed: 7, events: 25, kpis: 12, apiKey: KEY });
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await sandbox.close();
});

function client(options: Partial<ApiClientOptions> = {}): ApiClient {
  const c = createApiClient({ baseUrl: sandbox.url, apiKey: KEY, backoffBaseMs: 1, ...options });
  clients.push(c);
  return c;
}

async function allEvents(c: ApiClient, limit?: number): Promise<EventRow[]> {
  const rows: EventRow[] = [];
  for await (const page of c.eventPages(limit === undefined ? {} : { limit })) rows.push(...page.rows);
  return rows;
}

const requestsTo = (prefix: string) => sandbox.requests.filter((r) => r.path.startsWith(prefix));

describe('api client against the sandbox', () => {
  it('pages through every event, several pages, no duplicates, with eligibility', async () => {
    const rows = await allEvents(client(), 7);
    const tickers = rows.map((r) => r.event_ticker);
    expect(new Set(tickers).size).toBe(tickers.length);
    expect([...tickers].sort()).toEqual([...sandbox.world.eventTickers()].sort());
    const listCalls = requestsTo('/v1/predictions/events');
    expect(listCalls).toHaveLength(Math.ceil(tickers.length / 7));
    expect(listCalls.every((r) => r.query['include'] === 'eligibility' && r.query['limit'] === '7')).toBe(true);
    expect(rows.every((r) => typeof r.eligibility_status === 'string')).toBe(true);
  });

  it('reads an event detail and its history', async () => {
    const c = client();
    const ticker = sandbox.world.eventTickers()[0]!;
    sandbox.advance(1);
    sandbox.world.updateEvent(ticker, { edge_pp: 11.5 });
    const detail = await c.event(ticker);
    expect(detail.event_ticker).toBe(ticker);
    expect(detail.edge_pp).toBe(11.5);
    expect(detail.markets.length).toBeGreaterThan(0);
    expect(detail.venue).toBe(sandbox.world.eventVenue(ticker));

    const history = [];
    for await (const page of c.eventHistoryPages(ticker, { limit: 1 })) history.push(...page.rows);
    expect(history.length).toBeGreaterThanOrEqual(2);
    expect(history[0]!.edge_pp).toBe(11.5);
    expect(new Set(history.map((h) => h.history_id)).size).toBe(history.length);
  });

  it('reads a report and its trust scorecard, and 404 report_not_found from {error:{...}}', async () => {
    const c = client();
    const [withReport, without] = sandbox.world.eventTickers();
    sandbox.world.setTrust(withReport!, { label: 'Caution', score: 55 });
    sandbox.world.setTrust(without!, null);
    const venue = sandbox.world.eventVenue(withReport!);
    const key = sandbox.world.eventKey(withReport!);

    const report = await c.report(venue, key);
    expect(report.versions.length).toBeGreaterThan(0);
    expect(report.trust_label).toBe('Caution');
    expect(report.run_id).toBe(report.versions[0]!.run_id);

    const trust = await c.trust(venue, key, { expand: ['integrity', 'trade_quality'] });
    expect(trust.trust_index.label).toBe('Caution');
    expect(trust.trust_index.score).toBe(55);
    expect(trust.trust_index.profile.integrity.breakdown.map((p) => p.key)).toEqual([
      'manipulation_resistance',
      'information_fairness',
      'settlement_reliability',
    ]);

    const err = await rejection(c.trust(sandbox.world.eventVenue(without!), sandbox.world.eventKey(without!)));
    expect(err).toMatchObject({ code: 'report_not_found', status: 404, retryable: false });
    expect(err.apiMessage).toBe(`No report generated yet for ${without}`);
  });

  it('starts a generation, then follows its run to completion', async () => {
    const c = client();
    const open = (await allEvents(c)).find((r) => r.eligibility_status === 'open')!;
    const venue = sandbox.world.eventVenue(open.event_ticker);
    const before = sandbox.world.credits();
    const accepted = await c.startGeneration(venue, sandbox.world.eventKey(open.event_ticker));
    expect(accepted.status).toBe('processing');
    expect(sandbox.world.credits()).toBe(before - 3);
    expect((await c.runStatus(accepted.run_id)).status).toBe('processing');
    sandbox.world.finishRun(accepted.run_id, 'completed');
    const run = await c.runStatus(accepted.run_id);
    expect(run).toMatchObject({ run_id: accepted.run_id, status: 'completed', venue });
  });

  it('pages the KPI board with its as_of, and reads one KPI', async () => {
    const c = client();
    const ids: string[] = [];
    let asOf: string | null = null;
    for await (const page of c.kpiPages({ limit: 5 })) {
      ids.push(...page.rows.map((r) => r.id));
      asOf = page.asOf;
    }
    expect([...ids].sort()).toEqual([...sandbox.world.kpiIds()].sort());
    expect(requestsTo('/v1/predictions/kpi-events')).toHaveLength(Math.ceil(ids.length / 5));
    expect(asOf).toEqual(expect.any(String));

    const detail = await c.kpi(ids[0]!);
    expect(detail.event_id).toBe(ids[0]);
  });

  it('parses a KPI 404 from {detail}', async () => {
    const err = await rejection(client().kpi('no-such-kpi'));
    expect(err).toMatchObject({ code: 'http_404', status: 404, retryable: false, resource: 'kpi no-such-kpi' });
    expect(err.apiMessage).toEqual(expect.any(String));
  });

  it('reads the edge ranking and the model edge of chosen tickers', async () => {
    const c = client();
    const ranked = [];
    for await (const page of c.marketsWithEdgePages({ limit: 10 })) {
      ranked.push(...page.rows);
      expect(page.runId === null || typeof page.runId === 'string').toBe(true);
    }
    expect(ranked.length).toBeGreaterThan(0);
    const ticker = ranked[0]!.event_ticker;
    const edge = await c.edge([ticker]);
    expect(edge.data[0]).toMatchObject({ input_ticker: ticker, event_ticker: ticker });
  });

  it('fails with 401 on a wrong key, without retrying or leaking either key', async () => {
    const wrong = 'wrong-key-123456';
    const err = await rejection(allEvents(client({ apiKey: wrong })));
    expect(err).toMatchObject({ status: 401, retryable: false });
    expect(sandbox.requests).toHaveLength(1);
    expect(`${err.message} ${err.apiMessage ?? ''}`).not.toContain(wrong);
    expect(err.message).not.toContain(KEY);
  });

  it('retries after a 429 with retry-after: 1, then succeeds', async () => {
    sandbox.inject({ path: '/v1/predictions/events', status: 429, headers: { 'retry-after': '1' }, count: 1 });
    const started = Date.now();
    const rows = await allEvents(client());
    expect(rows.length).toBe(sandbox.world.eventTickers().length);
    expect(requestsTo('/v1/predictions/events').length).toBe(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('retries a 503, then succeeds', async () => {
    sandbox.inject({ path: '/v1/predictions/kpi-events', status: 503, count: 2 });
    const ids: string[] = [];
    for await (const page of client().kpiPages()) ids.push(...page.rows.map((r) => r.id));
    expect(ids.length).toBe(sandbox.world.kpiIds().length);
    expect(requestsTo('/v1/predictions/kpi-events')).toHaveLength(3);
  });

  it('does not retry a 400', async () => {
    sandbox.inject({ path: '/v1/predictions/events', status: 400, count: 5 });
    const err = await rejection(allEvents(client()));
    expect(err).toMatchObject({ status: 400, retryable: false });
    expect(sandbox.requests).toHaveLength(1);
  });

  it('times out a request slower than timeoutMs', async () => {
    sandbox.inject({ path: '/v1/predictions/events', delayMs: 1500, count: 5 });
    const started = Date.now();
    const err = await rejection(allEvents(client({ timeoutMs: 200, retries: 1 })));
    expect(err).toMatchObject({ code: 'timeout', retryable: true, status: undefined });
    expect(Date.now() - started).toBeLessThan(1400);
  });

  it('accepts and keeps an extra field on a row', async () => {
    const ticker = sandbox.world.eventTickers()[3]!;
    sandbox.advance(1);
    sandbox.world.updateEvent(ticker, { brand_new_field: { nested: [1, 2] } });
    const row = (await allEvents(client())).find((r) => r.event_ticker === ticker)!;
    expect(row['brand_new_field']).toEqual({ nested: [1, 2] });
  });

  // The sandbox's updateEvent drops a non-numeric value of the fields it derives (edge_pp among
  // them), so the wrongly typed field here is r_score, which it passes through; the exact
  // edge_pp message is checked against a local server in api-client-local.test.ts.
  it('rejects a wrongly typed field, naming the field and the ticker', async () => {
    const ticker = sandbox.world.eventTickers()[2]!;
    sandbox.advance(1);
    sandbox.world.updateEvent(ticker, { r_score: 'abc' });
    const err = await rejection(allEvents(client()));
    expect(err).toMatchObject({ code: 'invalid_response', retryable: false, resource: 'events list' });
    expect(err.message).toBe(`events list: row ${ticker}: field r_score: expected number, received string`);
  });
});
