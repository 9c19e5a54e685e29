// The core pipeline against the sandbox over HTTP, each test with a fresh database.
import { afterEach, describe, expect, it } from 'vitest';
import { startGeneration } from '../../src/service/generate.ts';
import { insertRun, listRuns } from '../../src/store/index.ts';
import { startPipeline, type Pipeline } from '../helpers/pipeline.ts';

const RULES = `
channels:
  screen: { type: console }
rules:
  - name: edge-over-10
    source: events
    trigger: { type: crosses, field: edge_pp, above: 10, abs: true, rearm: 2 }
    notify: [screen]
  - name: new-events
    source: events
    trigger: { type: new }
    notify: [screen]
  - name: kpi-actual
    source: kpis
    trigger: { type: appears, field: actual }
    notify: [screen]
  - name: kpi-near-settled
    source: kpis
    trigger: { type: flips, field: near_settled, to: true }
    notify: [screen]
  - name: trust-drop
    source: reports
    trigger: { type: drops, field: trust_label }
    notify: [screen]
  - name: run-finished
    source: runs
    trigger: { type: changes, field: status, to: [completed, failed] }
    notify: [screen]
`;

let pipeline: Pipeline | undefined;
afterEach(async () => {
  await pipeline?.close();
  pipeline = undefined;
});

function firedBy(p: Pipeline, rule: string) {
  return p.storedAlerts().filter((a) => a.rule === rule);
}

/** Starts a generation on the first event whose market is open; returns its run id. */
async function startAnyGeneration(p: Pipeline): Promise<string> {
  for (const t of p.sandbox.world.eventTickers()) {
    try {
      return (await startGeneration(p.store, p.api, p.sandbox.world.eventVenue(t), p.sandbox.world.eventKey(t), p.sandbox.now())).runId;
    } catch {
      // market not open: try the next event
    }
  }
  throw new Error('no open market in the sandbox');
}

describe('pipeline', () => {
  it('stores a baseline on the first poll and fires nothing', async () => {
    const p = (pipeline = await startPipeline({ rules: RULES }));
    const report = await p.poll();
    expect(report.failures).toEqual([]);
    expect(report.alerts).toEqual([]);
    const count = p.sql.prepare("SELECT count(*) AS n FROM entities WHERE source = 'events'").get() as { n: number };
    expect(count.n).toBe(p.sandbox.world.eventTickers().length);
    expect(p.storedAlerts()).toEqual([]);
  });

  it('fires a crossing once, not again on a re-poll or after a restart', async () => {
    const p = (pipeline = await startPipeline({ rules: RULES }));
    const [ticker] = p.sandbox.world.eventTickers();
    p.sandbox.world.updateEvent(ticker!, { edge_pp: 4 });
    await p.poll();
    p.sandbox.world.updateEvent(ticker!, { edge_pp: -12.5 });
    const first = await p.poll();
    const crossings = first.alerts.filter((a) => a.rule === 'edge-over-10');
    expect(crossings.map((a) => a.entity)).toEqual([ticker]);
    expect(crossings[0]!.changes[0]).toMatchObject({ field: 'edge_pp', from: 4, to: -12.5 });
    expect(crossings[0]!.current).toMatchObject({ event_ticker: ticker, edge_pp: -12.5, abs_edge_pp: 12.5 });

    expect((await p.poll()).alerts).toEqual([]);
    await p.restart();
    expect((await p.poll()).alerts).toEqual([]);
    // Still beyond: no second firing until it re-arms at 8 or less.
    p.sandbox.world.updateEvent(ticker!, { edge_pp: 13 });
    expect((await p.poll()).alerts.filter((a) => a.rule === 'edge-over-10')).toEqual([]);
    p.sandbox.world.updateEvent(ticker!, { edge_pp: 8 });
    await p.poll();
    p.sandbox.world.updateEvent(ticker!, { edge_pp: 11 });
    expect((await p.poll()).alerts.filter((a) => a.rule === 'edge-over-10')).toHaveLength(1);
    expect(firedBy(p, 'edge-over-10')).toHaveLength(2);
  });

  it('stops an incremental events poll at the watermark', async () => {
    const p = (pipeline = await startPipeline({ rules: RULES, sandbox: { events: 1000 } }));
    await p.poll();
    const eventPages = () => p.sandbox.requests.filter((r) => r.path === '/v1/predictions/events').length;
    expect(eventPages()).toBe(5); // 1000 events, 200 a page
    p.sandbox.requests.length = 0;
    const [ticker] = p.sandbox.world.eventTickers();
    p.sandbox.world.updateEvent(ticker!, { edge_pp: 30 });
    await p.poll();
    expect(eventPages()).toBe(1);
  });

  it('fires for a new event and catches a change on the last page of a multi-page board', async () => {
    const p = (pipeline = await startPipeline({ rules: RULES, sandbox: { events: 450, kpis: 450 } }));
    await p.poll();
    const ticker = p.sandbox.world.addEvent();
    const ids = p.sandbox.world.kpiIds();
    const last = ids[ids.length - 1]!;
    p.sandbox.world.updateKpi(last, { near_settled: false });
    await p.poll();
    p.sandbox.world.updateKpi(last, { near_settled: true, market_probability: 98 });
    const report = await p.poll();
    expect(report.alerts.filter((a) => a.rule === 'kpi-near-settled').map((a) => a.entity)).toEqual([last]);
    expect(firedBy(p, 'new-events').map((a) => a.entity)).toEqual([ticker]);
  });

  it('fires a KPI actual with the surprise attached', async () => {
    const p = (pipeline = await startPipeline({ rules: RULES }));
    const [id] = p.sandbox.world.kpiIds();
    p.sandbox.world.settleKpi(id!);
    await p.poll();
    p.sandbox.world.landActual(id!, 1234);
    await p.poll();
    const [alert] = firedBy(p, 'kpi-actual');
    expect(alert?.entity).toBe(id);
    const detail = alert!.current.detail as { analysis: { surprise: unknown }; actual: { sources: unknown[] } };
    expect(detail.analysis.surprise).not.toBeNull();
    expect(detail.analysis.surprise).toBeDefined();
    expect(Array.isArray(detail.actual.sources)).toBe(true);
    expect((alert!.current.actual as { value: number }).value).toBe(1234);
    // Carried forward: the next poll sees no change and fires nothing.
    expect((await p.poll()).alerts).toEqual([]);
  });

  it('fires when a trust label drops, and `new` semantics for a report that appears', async () => {
    const p = (pipeline = await startPipeline({ rules: RULES, sandbox: { events: 20 } }));
    const [watched, later] = p.sandbox.world.eventTickers();
    for (const t of p.sandbox.world.eventTickers()) p.sandbox.world.setTrust(t, null);
    p.sandbox.world.setTrust(watched!, { label: 'Good', score: 72 });
    await p.poll(); // baseline of events; first check of every report
    await p.poll();
    expect(p.storedAlerts()).toEqual([]);
    p.sandbox.world.setTrust(watched!, { label: 'Caution', score: 55 });
    p.sandbox.world.setTrust(later!, { label: 'Strong', score: 90 });
    await p.poll();
    const drops = firedBy(p, 'trust-drop');
    const venue = p.sandbox.world.eventVenue(watched!);
    expect(drops.map((a) => a.entity)).toEqual([`${venue}/${p.sandbox.world.eventKey(watched!)}`]);
    expect(drops[0]!.changes[0]).toMatchObject({ field: 'trust_label', from: 'Good', to: 'Caution' });
  });

  it('skips an event whose detail answers 404, checks the other reports, and picks it last next time', async () => {
    const p = (pipeline = await startPipeline({ rules: RULES, sandbox: { events: 20 }, reportsBudget: 6 }));
    // Never-checked events go first, by ticker: the delisted one is the very first pick.
    const [delisted, ...others] = [...p.sandbox.world.eventTickers()].sort();
    const detailPath = `/v1/predictions/events/${delisted}`;
    p.sandbox.inject({ path: detailPath, status: 404, count: 100 });
    const first = await p.poll();
    expect(first.failures).toEqual([]);
    const checked = () => p.sql.prepare<[], { event_ticker: string }>('SELECT event_ticker FROM report_checks WHERE found IS NOT NULL').all().map((r) => r.event_ticker);
    expect(checked()).toEqual(others.slice(0, 2));
    expect(p.sandbox.requests.filter((r) => r.path === detailPath)).toHaveLength(1);

    p.sandbox.requests.length = 0;
    const second = await p.poll();
    expect(second.failures).toEqual([]);
    expect(p.sandbox.requests.filter((r) => r.path === detailPath)).toEqual([]);
    expect(checked()).toEqual(others.slice(0, 5));
  });

  it('fires when a generation run completes', async () => {
    const p = (pipeline = await startPipeline({ rules: RULES }));
    await p.poll();
    const runId = await startAnyGeneration(p);
    expect((await p.poll()).alerts).toEqual([]);
    p.sandbox.world.finishRun(runId, 'completed');
    const report = await p.poll();
    const [alert] = report.alerts.filter((a) => a.rule === 'run-finished');
    expect(alert?.entity).toBe(runId);
    expect(alert?.current).toMatchObject({ status: 'completed' });
    const retrieved = await p.api.report(alert!.current.venue as 'venuea' | 'venueb', p.sandbox.world.eventKey(alert!.current.event_ticker as string));
    expect(retrieved.title).toEqual(expect.any(String));
    expect(alert?.current.title).toBe(retrieved.title);
    expect((await p.poll()).results.find((r) => r.source === 'runs')?.skipped).toBe(true);
  });

  it('stops watching a run the API does not know (404) without failing the other runs', async () => {
    const p = (pipeline = await startPipeline({ rules: RULES }));
    await p.poll();
    // Recorded by an earlier sandbox, say, that has since been restarted.
    const lost = '00000000-0000-4000-8000-000000000000';
    await insertRun(p.store, { run_id: lost, venue: 'venuea', event_key: 'KXGONE-26JAN', status: 'processing', created_at: p.sandbox.now().toISOString() });
    const runId = await startAnyGeneration(p);
    p.sandbox.world.finishRun(runId, 'completed');
    const report = await p.poll();
    expect(report.failures).toEqual([]);
    expect(report.alerts.filter((a) => a.rule === 'run-finished').map((a) => a.entity)).toEqual([runId]);
    expect((await listRuns(p.store)).map((r) => [r.run_id, r.status]).sort()).toEqual([[lost, 'not_found'], [runId, 'completed']].sort());
    p.sandbox.requests.length = 0;
    expect((await p.poll()).results.find((r) => r.source === 'runs')?.skipped).toBe(true);
    expect(p.sandbox.requests.filter((r) => r.path.includes(lost))).toEqual([]);
  });

  it('leaves no false alert after a failed or malformed page, and the next poll catches up', async () => {
    const p = (pipeline = await startPipeline({ rules: RULES, sandbox: { events: 450 } }));
    await p.poll();
    const [ticker] = p.sandbox.world.eventTickers();
    p.sandbox.world.updateEvent(ticker!, { edge_pp: 0 });
    await p.poll();
    p.sandbox.world.updateEvent(ticker!, { edge_pp: 25 });

    p.sandbox.inject({ path: '/v1/predictions/events', status: 500 });
    const failed = await p.poll();
    expect(failed.failures.map((f) => f.source)).toEqual(['events']);
    expect(failed.alerts.filter((a) => a.source === 'events')).toEqual([]);

    p.sandbox.inject({ path: '/v1/predictions/events', body: '{"data": [{"event_ticker": ' });
    const malformed = await p.poll();
    expect(malformed.failures.map((f) => f.source)).toEqual(['events']);
    expect(p.storedAlerts().filter((a) => a.source === 'events')).toEqual([]);

    const caughtUp = await p.poll();
    expect(caughtUp.failures).toEqual([]);
    expect(caughtUp.alerts.map((a) => [a.rule, a.entity])).toEqual([['edge-over-10', ticker]]);
  });

  it('leaves a source state untouched on a 503', async () => {
    const p = (pipeline = await startPipeline({ rules: RULES }));
    await p.poll();
    const before = p.sql.prepare("SELECT baseline_at, watermark, last_success_at FROM source_state WHERE source = 'kpis'").get();
    const entitiesBefore = p.sql.prepare("SELECT entity_key, seq, data FROM entities WHERE source = 'kpis' ORDER BY entity_key").all();
    p.sandbox.advance(5);
    const [id] = p.sandbox.world.kpiIds();
    p.sandbox.world.updateKpi(id!, { near_settled: true });
    p.sandbox.inject({ path: '/v1/predictions/kpi-events', status: 503, count: 5 });
    const report = await p.poll();
    expect(report.failures.map((f) => f.source)).toEqual(['kpis']);
    expect(p.sql.prepare("SELECT baseline_at, watermark, last_success_at FROM source_state WHERE source = 'kpis'").get()).toEqual(before);
    expect(p.sql.prepare("SELECT entity_key, seq, data FROM entities WHERE source = 'kpis' ORDER BY entity_key").all()).toEqual(entitiesBefore);
    const state = p.sql.prepare("SELECT last_error FROM source_state WHERE source = 'kpis'").get() as { last_error: string };
    expect(state.last_error).toMatch(/503/);
  });

  it('changes nothing on a dry run', async () => {
    const p = (pipeline = await startPipeline({ rules: RULES }));
    await p.poll();
    const [ticker] = p.sandbox.world.eventTickers();
    p.sandbox.world.updateEvent(ticker!, { edge_pp: 0 });
    await p.poll();
    p.sandbox.world.updateEvent(ticker!, { edge_pp: 40 });
    const dump = () => p.sql.prepare('SELECT * FROM entities ORDER BY source, entity_key').all();
    const before = dump();
    const dry = await p.poll({ dryRun: true });
    expect(dry.alerts.map((a) => a.rule)).toContain('edge-over-10');
    expect(dump()).toEqual(before);
    expect(p.storedAlerts()).toHaveLength(0);
    const real = await p.poll();
    expect(real.alerts.map((a) => a.id)).toEqual(dry.alerts.map((a) => a.id));
  });
});
