import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { waitFor } from '../helpers/wait.ts';
import type { Json } from '../helpers/json.ts';

const started: Sandbox[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.close()));
});

async function sandbox(options: Parameters<typeof startSandbox>[0] = {}): Promise<Sandbox> {
  const s = await startSandbox(options);
  started.push(s);
  return s;
}

async function call(s: Sandbox, path: string, init: RequestInit & { key?: string | null } = {}): Promise<{ status: number; body: Json; headers: Headers }> {
  const { key = 'test-key', ...rest } = init;
  const headers: Record<string, string> = key === null ? {} : { authorization: `Bearer ${key}` };
  const res = await fetch(`${s.url}${path}`, { ...rest, headers: { ...headers, 'content-type': 'application/json' } });
  return { status: res.status, body: (await res.json()) as Json, headers: res.headers };
}

async function allEvents(s: Sandbox, limit: number): Promise<Json[]> {
  const rows: Json[] = [];
  let cursor: string | null = null;
  do {
    const page: Json = (await call(s, `/predictions/events?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)).body;
    rows.push(...page.data);
    expect(page.has_more).toBe(page.next_cursor !== null);
    cursor = page.next_cursor;
  } while (cursor);
  return rows;
}

function newerOrEqual(a: Json, b: Json): boolean {
  return a.captured_at > b.captured_at || (a.captured_at === b.captured_at && a.history_id > b.history_id);
}

describe('sandbox events', () => {
  it('paginates the whole list newest first with base64 JSON cursors', async () => {
    const s = await sandbox();
    const first = await call(s, '/predictions/events');
    expect(first.status).toBe(200);
    expect(first.body.data).toHaveLength(10);
    const cursor = JSON.parse(Buffer.from(first.body.next_cursor, 'base64').toString('utf8'));
    expect(cursor).toEqual({ captured_at: first.body.data[9].captured_at, history_id: first.body.data[9].history_id });

    const rows = await allEvents(s, 7);
    const tickers = rows.map((r) => r.event_ticker);
    expect(new Set(tickers).size).toBe(tickers.length);
    expect(new Set(tickers)).toEqual(new Set(s.world.eventTickers()));
    for (let i = 1; i < rows.length; i++) expect(newerOrEqual(rows[i - 1]!, rows[i]!)).toBe(true);
    const row = rows[0]!;
    expect(row.edge_pp).toBeCloseTo(row.model_probability - row.market_probability, 1);
    expect(row.research).toBeTypeOf('object');
    expect(row.eligible).toBeUndefined();
  });

  it('keeps pagination correct while events move, and serves eligibility on request', async () => {
    const s = await sandbox();
    const page1 = (await call(s, '/predictions/events?limit=20&include=eligibility')).body;
    expect(['open', 'paused', 'unopened', 'closed', 'settled', 'unknown']).toContain(page1.data[0].eligibility_status);
    // An event not yet seen moves to the top: later pages must neither repeat nor drop the others.
    const rest = s.world.eventTickers().filter((t) => !page1.data.some((r: Json) => r.event_ticker === t));
    s.world.updateEvent(rest[0]!, { edge_pp: 4 });
    const seen = new Set(page1.data.map((r: Json) => r.event_ticker));
    let cursor = page1.next_cursor;
    while (cursor) {
      const page = (await call(s, `/predictions/events?limit=20&cursor=${encodeURIComponent(cursor)}`)).body;
      for (const r of page.data) {
        expect(seen.has(r.event_ticker)).toBe(false);
        seen.add(r.event_ticker);
      }
      cursor = page.next_cursor;
    }
    expect(seen.size).toBe(59);
    expect(seen.has(rest[0])).toBe(false);
  });

  it('updateEvent makes a new newest snapshot with the edge patched', async () => {
    const s = await sandbox();
    const before = (await call(s, '/predictions/events?limit=200')).body.data as Json[];
    const oldest = before[before.length - 1]!;
    s.advance(0.5);
    s.world.updateEvent(oldest.event_ticker, { edge_pp: 12.5 });
    const top = (await call(s, '/predictions/events?limit=1')).body.data[0];
    expect(top.event_ticker).toBe(oldest.event_ticker);
    expect(top.history_id).toBeGreaterThan(Math.max(...before.map((r) => r.history_id)));
    expect(top.captured_at).toBe(s.now().toISOString().replace('.000Z', 'Z'));
    expect(top.edge_pp).toBe(12.5);
    expect(top.model_probability).toBeCloseTo(top.market_probability + 12.5, 5);
    expect(top.has_history).toBe(true);

    const history = (await call(s, `/predictions/events/${oldest.event_ticker.toLowerCase()}/history?include=analysis`)).body;
    expect(history.event_ticker).toBe(oldest.event_ticker);
    expect(history.data[0].history_id).toBe(top.history_id);
    expect(history.data[1].history_id).toBe(oldest.history_id);
    expect(history.data[0].key_takeaway).toBeTypeOf('string');
  });

  it('serves event detail by ticker or slug in any case, and 404/400 in the error envelope', async () => {
    const s = await sandbox();
    const ticker = s.world.eventTickers().find((t) => s.world.eventVenue(t) === 'venuea')!;
    const d = await call(s, `/predictions/events/${ticker.toLowerCase()}`);
    expect(d.status).toBe(200);
    expect(d.body).toMatchObject({ event_ticker: ticker, venue: 'venuea', title: d.body.name });
    expect(d.body.markets[0]).toHaveProperty('model_probability_source');
    expect(d.body.markets[0]).toHaveProperty('evidence_grade');
    const pinned = await call(s, `/predictions/events/${ticker}?run_id=${d.body.run_id}`);
    expect(pinned.body.history_id).toBe(d.body.history_id);

    const missing = await call(s, '/predictions/events/NOPE-00');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ code: 'not_found', type: expect.any(String) });
    expect(missing.body.error).toHaveProperty('param');
    expect(missing.body.error).toHaveProperty('message');
    const bad = await call(s, `/predictions/events/${ticker}?run_id=zzz`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_value');
  });

  it('serves 50,000 events', async () => {
    const s = await sandbox({ events: 50_000, kpis: 5_000 });
    const page = await call(s, '/predictions/events?limit=200');
    expect(page.body.data).toHaveLength(200);
    expect((await call(s, '/predictions/kpi-events?limit=200')).body.data).toHaveLength(200);
  });
});

describe('sandbox auth', () => {
  it('answers 401 without a header, and with a wrong key when apiKey is set', async () => {
    const open = await sandbox();
    expect((await call(open, '/predictions/events', { key: null })).status).toBe(401);
    expect((await call(open, '/predictions/events', { key: 'anything' })).status).toBe(200);

    const locked = await sandbox({ apiKey: 'sekret' });
    const wrong = await call(locked, '/predictions/events', { key: 'other' });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.code).toBe('unauthorized');
    const kpi = await call(locked, '/predictions/kpi-events', { key: null });
    expect(kpi.status).toBe(401);
    expect(kpi.body).toEqual({ detail: expect.any(String) });
    expect((await call(locked, '/predictions/events', { key: 'sekret' })).status).toBe(200);
  });
});

describe('sandbox reports and generation', () => {
  function openVenueaEvent(s: Sandbox): string {
    return s.world.addEvent({ edge_pp: 3 });
  }

  it('answers report errors in the {error} envelope', async () => {
    const s = await sandbox();
    const t = openVenueaEvent(s);
    const unknownParam = await call(s, `/predictions/reports/venuea/${t}?foo=1`);
    expect(unknownParam.status).toBe(400);
    expect(unknownParam.body).toEqual({ error: { message: expect.any(String), type: expect.any(String), param: 'foo', code: 'invalid_value' } });
    expect((await call(s, '/predictions/reports/venuea/NOPE-1')).body.error.code).toBe('not_found');

    s.world.setTrust(t, null);
    const none = await call(s, `/predictions/reports/venuea/${t}/trust`);
    expect(none.status).toBe(404);
    expect(none.body.error.code).toBe('report_not_found');
    const empty = await call(s, `/predictions/reports/venuea/${t}`);
    expect(empty.status).toBe(200);
    expect(empty.body).toMatchObject({ versions: [], run_id: null, markdown_report: null });

    s.world.setTrust(t, { label: 'Good', score: 71 });
    const trust = await call(s, `/predictions/reports/venuea/${t}/trust`);
    expect(trust.status).toBe(200);
    expect(trust.body.trust_index).toMatchObject({ score: 71, label: 'Good' });
    expect(trust.body.trust_index.profile.integrity.breakdown.map((p: Json) => p.key)).toEqual(['manipulation_resistance', 'information_fairness', 'settlement_reliability']);
    expect(trust.body.trust_index.profile.trade_quality.breakdown.map((p: Json) => p.key)).toEqual(['liquidity', 'move_quality', 'rule_clarity']);
    s.world.setTrust(t, { label: 'Caution', score: 55 });
    const report = (await call(s, `/predictions/reports/venuea/${t}`)).body;
    expect(report.versions.map((v: Json) => v.trust_label)).toEqual(['Caution', 'Good']);
    expect(report.markdown_report).toContain('55 (Caution)');
  });

  it('runs a generation: 202, processing, completed; and finishes on its own after a few minutes', async () => {
    const s = await sandbox();
    const t = openVenueaEvent(s);
    const accepted = await call(s, `/predictions/reports/venuea/${t}`, { method: 'POST' });
    expect(accepted.status).toBe(202);
    expect(accepted.body).toMatchObject({ status: 'processing', event_ticker: t, venue: 'venuea' });
    expect(s.world.credits()).toBe(27);
    const runId = accepted.body.run_id as string;
    const status = await call(s, `/predictions/reports/status/${runId}`);
    expect(status.body).toMatchObject({ run_id: runId, status: 'processing', venue: 'venuea', event_ticker: t });
    expect(status.body.requested_url).toContain(t.toLowerCase());
    s.world.finishRun(runId, 'completed');
    expect((await call(s, `/predictions/reports/status/${runId}`)).body.status).toBe('completed');
    expect((await call(s, `/predictions/reports/venuea/${t}`)).body.versions[0].run_id).toBe(runId);

    const second = (await call(s, `/predictions/reports/venuea/${t}`, { method: 'POST' })).body.run_id as string;
    s.advance(4);
    expect((await call(s, `/predictions/reports/status/${second}`)).body.status).toBe('processing');
    s.advance(5);
    expect(['completed', 'failed']).toContain((await call(s, `/predictions/reports/status/${second}`)).body.status);

    const unknown = await call(s, '/predictions/reports/status/00000000-0000-4000-8000-000000000000');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('not_found');
  });

  it('gives every generation run a new id, also in a sandbox started again on the same seed', async () => {
    const ids: string[] = [];
    for (let restart = 0; restart < 2; restart++) {
      const s = await sandbox({ seed: 5 });
      const t = openVenueaEvent(s);
      for (let i = 0; i < 2; i++) ids.push((await call(s, `/predictions/reports/venuea/${t}`, { method: 'POST' })).body.run_id as string);
    }
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(ids).size).toBe(4);
  });

  it('refuses generation on a closed market (409), unknown key (400), and without credits (429), refunding failures', async () => {
    const s = await sandbox({ credits: 4 });
    const t = openVenueaEvent(s);
    const closed = openVenueaEvent(s);
    s.world.updateEvent(closed, { eligibility_status: 'closed' });
    expect((await call(s, '/predictions/events?limit=1')).body.data[0]).not.toHaveProperty('eligibility_status');
    expect((await call(s, '/predictions/events?limit=1&include=eligibility')).body.data[0]).toMatchObject({ eligible: false, eligibility_status: 'closed' });
    const refused = await call(s, `/predictions/reports/venuea/${closed}`, { method: 'POST' });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('venuea_market_not_open');
    expect((await call(s, '/predictions/reports/venuea/NOPE-1', { method: 'POST' })).body.error.code).toBe('venuea_url_required');

    const run = (await call(s, `/predictions/reports/venuea/${t}`, { method: 'POST' })).body.run_id as string;
    expect(s.world.credits()).toBe(1);
    const broke = await call(s, `/predictions/reports/venuea/${t}`, { method: 'POST' });
    expect(broke.status).toBe(429);
    expect(broke.body.error.code).toBe('insufficient_credits');
    s.world.finishRun(run, 'failed');
    expect(s.world.credits()).toBe(4);
    expect((await call(s, `/predictions/reports/status/${run}`)).body.status).toBe('failed');
  });

  it('keys venueb reports by slug', async () => {
    const s = await sandbox();
    const t = s.world.addEvent({ venue: 'venueb' });
    expect(s.world.eventVenue(t)).toBe('venueb');
    const key = s.world.eventKey(t);
    s.world.setTrust(t, { label: 'Strong', score: 88 });
    const trust = await call(s, `/predictions/reports/venueb/${key}/trust`);
    expect(trust.body).toMatchObject({ venue: 'venueb', trust_index: { label: 'Strong', score: 88 } });
    expect((await call(s, `/predictions/reports/venuea/${key}/trust`)).status).toBe(404);
  });
});

describe('sandbox KPI events', () => {
  it('settles a KPI, then lands its actual with a surprise', async () => {
    const s = await sandbox();
    const board = (await call(s, '/predictions/kpi-events?status=active&limit=200')).body;
    expect(board).toMatchObject({ sort: 'newsworthiness', status: 'active', aggregates: { total_events: board.data.length } });
    const id = board.data[0].id as string;
    expect(board.data[0].market_implied).toEqual({ value: expect.any(Number), unit: expect.any(String), formatted: expect.any(String) });

    s.world.settleKpi(id);
    const settled = (await call(s, '/predictions/kpi-events?status=settled&limit=200')).body.data.find((r: Json) => r.id === id);
    expect(settled).toMatchObject({ status: 'settled', actual: null, actual_source: null });
    expect((await call(s, `/predictions/kpi-events/${id}`)).body.actual).toBeNull();

    s.world.landActual(id, 1234);
    const reported = (await call(s, '/predictions/kpi-events?status=reported&limit=200')).body.data.find((r: Json) => r.id === id);
    expect(reported.actual.value).toBe(1234);
    expect(reported.actual_source).toBeTypeOf('string');
    expect(reported.reported_at).toBeTypeOf('string');
    const detail = (await call(s, `/predictions/kpi-events/${id}`)).body;
    expect(detail.actual.value.value).toBe(1234);
    expect(detail.analysis.surprise).not.toBeNull();
    expect(detail.editorial.status).toBe('reported');
  });

  it('answers KPI errors as {detail}', async () => {
    const s = await sandbox();
    const missing = await call(s, '/predictions/kpi-events/evt_nope');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ detail: expect.any(String) });
    expect((await call(s, '/predictions/kpi-events?status=bogus')).status).toBe(400);
    const big = await call(s, '/predictions/kpi-events?limit=500');
    expect(big.status).toBe(422);
    expect(big.body).toEqual({ detail: expect.any(String) });
  });

  it('paginates the board without duplicates', async () => {
    const s = await sandbox();
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Json = (await call(s, `/predictions/kpi-events?limit=15&sort=volume${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)).body;
      ids.push(...page.data.map((r: Json) => r.id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(ids.sort()).toEqual([...s.world.kpiIds()].sort());
  });
});

describe('sandbox model edge', () => {
  it('ranks markets with edge and answers POST /markets/edge, 422 on a bad body', async () => {
    const s = await sandbox();
    const ranking = (await call(s, '/predictions/venuea/markets-with-edge?limit=5')).body;
    expect(ranking).toMatchObject({ sort_by: 'edge_pp', run_id: expect.any(String), captured_at: expect.any(String) });
    expect(ranking.data[0].edge_pp).toBeGreaterThanOrEqual(ranking.data[4].edge_pp);
    const t = ranking.data[0].event_ticker;
    const edge = await call(s, '/predictions/venuea/markets/edge', { method: 'POST', body: JSON.stringify({ tickers: [t, `${t}-O1`] }) });
    expect(edge.status).toBe(200);
    expect(edge.body.data.map((r: Json) => r.event_ticker)).toEqual([t, t]);
    expect(edge.body.data[1].market_ticker).toBe(`${t}-O1`);
    const bad = await call(s, '/predictions/venuea/markets/edge', { method: 'POST', body: JSON.stringify({ tickers: [] }) });
    expect(bad.status).toBe(422);
    expect(bad.body).toEqual({ detail: expect.any(String) });
  });
});

describe('sandbox faults, clock and log', () => {
  it('injects a status, a malformed body and a delay, each for `count` requests', async () => {
    const s = await sandbox();
    s.inject({ path: '/v1/predictions/events', status: 503, headers: { 'retry-after': '1' }, count: 2 });
    const a = await call(s, '/predictions/events');
    expect(a.status).toBe(503);
    expect(a.headers.get('retry-after')).toBe('1');
    expect(a.body.error.code).toBe('service_unavailable');
    expect((await call(s, '/predictions/events')).status).toBe(503);
    expect((await call(s, '/predictions/events')).status).toBe(200);

    s.inject({ path: '/v1/predictions/kpi-events', status: 500 });
    expect((await call(s, '/predictions/kpi-events')).body).toEqual({ detail: expect.any(String) });

    s.inject({ path: '/v1/predictions/events', body: '{"data": [' });
    const malformed = await fetch(`${s.url}/predictions/events`, { headers: { authorization: 'Bearer k' } });
    expect(malformed.status).toBe(200);
    await expect(malformed.json()).rejects.toThrow();

    s.inject({ path: '/v1/predictions/events', method: 'POST', status: 500 });
    expect((await call(s, '/predictions/events')).status).toBe(200);
    s.clearFaults();

    s.inject({ path: '/v1/predictions/events', delayMs: 300 });
    const t0 = Date.now();
    expect((await call(s, '/predictions/events')).status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
  });

  it('logs every request in order', async () => {
    const s = await sandbox();
    await call(s, '/predictions/events?limit=3');
    await call(s, '/predictions/kpi-events', { key: null });
    expect(s.requests).toEqual([
      { method: 'GET', path: '/v1/predictions/events', query: { limit: '3' }, key: 'test-key', at: expect.any(Number) },
      { method: 'GET', path: '/v1/predictions/kpi-events', query: {}, key: undefined, at: expect.any(Number) },
    ]);
    s.requests.length = 0;
    expect(s.requests).toHaveLength(0);
  });

  it('counts the clients polling one list at the same time, told apart by their keys', async () => {
    const s = await sandbox();
    s.inject({ path: '/v1/predictions/events', delayMs: 300, count: 10 });
    await call(s, '/predictions/events', { key: 'a' });
    await call(s, '/predictions/events', { key: 'b' });
    await Promise.all([call(s, '/predictions/kpi-events', { key: 'a' }), call(s, '/predictions/events', { key: 'a' })]);
    expect(s.concurrentPollers('/v1/predictions/events')).toBe(1);
    await Promise.all([call(s, '/predictions/events', { key: 'a' }), call(s, '/predictions/events', { key: 'b' })]);
    expect(s.concurrentPollers('/v1/predictions/events')).toBe(2);
    expect(s.concurrentPollers('/v1/predictions/kpi-events')).toBe(1);
  });

  it('moves deterministically: the same seed and advances give the same world, a few events at a time', async () => {
    const [a, b] = [await sandbox({ seed: 7 }), await sandbox({ seed: 7 })];
    const before = await allEvents(a, 200);
    expect(await allEvents(b, 200)).toEqual(before);
    a.advance(10);
    b.advance(10);
    const after = await allEvents(a, 200);
    expect(await allEvents(b, 200)).toEqual(after);
    expect(a.now().toISOString()).toBe('2026-11-20T12:10:00.000Z');
    const moved = after.filter((r) => !before.some((p) => p.event_ticker === r.event_ticker && p.history_id === r.history_id));
    expect(moved.length).toBeGreaterThan(0);
    expect(moved.length).toBeLessThan(20);
    const other = await sandbox({ seed: 8 });
    expect((await allEvents(other, 200)).map((r) => r.event_ticker)).not.toEqual(before.map((r) => r.event_ticker));
  });

  it('continues a world: resumed at a time, it is the world that ran until then, whatever the steps', async () => {
    const ran = await sandbox({ seed: 7 });
    for (let i = 0; i < 40; i++) ran.advance(1.5); // the built-in sandbox's ticks
    const resumed = await sandbox({ seed: ran.seed, startTime: ran.startTime, resumeAt: ran.now() });
    expect(resumed.now()).toEqual(ran.now());
    expect(await allEvents(resumed, 200)).toEqual(await allEvents(ran, 200));
    const board = async (s: Sandbox) => (await call(s, '/predictions/kpi-events?limit=200&status=all')).body.data as Json[];
    expect(await board(resumed)).toEqual(await board(ran));
    await expect(startSandbox({ startTime: ran.startTime, resumeAt: new Date(ran.startTime.getTime() - 60_000) })).rejects.toThrow(/cannot resume at .*before the world's start/);
  });

  it('lands KPI actuals and flips near_settled over simulated hours', async () => {
    const s = await sandbox();
    const board = async () => (await call(s, '/predictions/kpi-events?limit=200')).body.data as Json[];
    const before = await board();
    s.advance(6 * 60);
    const after = await board();
    const was = new Map(before.map((r) => [r.id, r]));
    expect(after.some((r) => was.get(r.id)!.status === 'active' && r.status === 'settled')).toBe(true);
    expect(after.some((r) => was.get(r.id)!.actual === null && r.actual !== null)).toBe(true);
    expect(after.some((r) => was.get(r.id)!.near_settled !== r.near_settled)).toBe(true);
  });

  it('runs its clock in real time when speed is set', async () => {
    const s = await sandbox({ speed: 60 });
    const start = s.now().getTime();
    // The check is the wait itself: a clock that does not run never gets there, and it times out.
    await waitFor('30 simulated seconds to pass', () => s.now().getTime() - start >= 30_000, 5_000);
  });

  it('runSandboxCommand prints its address first', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', '-e', "import('./src/sandbox/main.ts').then((m) => m.runSandboxCommand({ port: 0 }))"], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const [chunk] = (await once(child.stdout, 'data')) as [Buffer];
      const line = chunk.toString().split('\n')[0]!;
      const match = /^edgewatch sandbox listening on (http:\/\/127\.0\.0\.1:\d+\/v1)$/.exec(line);
      expect(match).not.toBeNull();
      const res = await fetch(`${match![1]}/predictions/events?limit=1`, { headers: { authorization: 'Bearer k' } });
      expect(res.status).toBe(200);
    } finally {
      child.kill();
      await once(child, 'exit');
    }
  });
});
