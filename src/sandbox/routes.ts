// Request handlers: (world, request) -> reply. No sockets here; server.ts adapts them to node:http.
import { agentResponse } from './agent.ts';
import {
  detail, eventUrl, historyRow, iso, latest, listRow, reportRetrieval, runIdOf, trustScorecard,
  type SimEvent,
} from './events.ts';
import { boardRow, isReported, kpiDetail, type SimKpi } from './kpis.ts';
import { MARKET_ROUTES } from './market-routes.ts';
import {
  allowOnly, boolParam, decodeCursor, encodeCursor, errorBody, familyOf, intParam, offsetCursor, refuse, Refusal, timeParam,
  type Family, type Reply, type Route, type RouteRequest,
} from './params.ts';
import { KPI_SORTS, kpiSortValue, type EventKey, type KpiSort, type SimWorld } from './world.ts';

function eventKeyCursor(family: Family, text: string | undefined): EventKey | null {
  const c = decodeCursor(family, text);
  if (!c) return null;
  const captured = typeof c.captured_at === 'string' ? Date.parse(c.captured_at) : NaN;
  if (Number.isNaN(captured) || typeof c.history_id !== 'number') refuse(family, 400, 'cursor is not valid', 'invalid_value', 'cursor');
  return { captured_at: captured, history_id: c.history_id };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const EVENT_KEY = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

// ---- events ----

function listEvents(world: SimWorld, q: Record<string, string>): Reply {
  allowOnly('error', q, ['limit', 'cursor', 'has_history', 'include']);
  const limit = intParam('error', q, 'limit', 10, 1, 200);
  const include = (q.include ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  for (const value of include) if (value !== 'eligibility') refuse('error', 400, `Unsupported include value: ${value}`, 'invalid_value', 'include');
  const page = world.eventsPage(eventKeyCursor('error', q.cursor), limit, boolParam('error', q, 'has_history'));
  const lastEvent = page.events[page.events.length - 1];
  const last = lastEvent ? latest(lastEvent) : undefined;
  return {
    status: 200,
    body: {
      data: page.events.map((ev) => listRow(ev, latest(ev), include.includes('eligibility'))),
      next_cursor: page.hasMore && last ? encodeCursor({ captured_at: iso(last.captured_at), history_id: last.history_id }) : null,
      has_more: page.hasMore,
    },
  };
}

function requireEvent(world: SimWorld, key: string): SimEvent {
  if (!EVENT_KEY.test(key)) refuse('error', 400, `Malformed event key: ${key}`, 'invalid_value', 'event_ticker');
  return world.findEvent(key) ?? refuse('error', 404, `No event matches ${key}`, 'not_found', 'event_ticker');
}

function eventDetail(world: SimWorld, key: string, q: Record<string, string>): Reply {
  allowOnly('error', q, ['run_id']);
  if (q.run_id !== undefined && !UUID.test(q.run_id)) refuse('error', 400, 'run_id must be a UUID', 'invalid_value', 'run_id');
  const ev = requireEvent(world, key);
  const s = q.run_id === undefined ? latest(ev) : [...ev.snapshots].reverse().find((x) => runIdOf(x) === q.run_id!.toLowerCase());
  if (!s) refuse('error', 404, `Event ${ev.ticker} has no snapshot for run ${q.run_id}`, 'not_found', 'run_id');
  return { status: 200, body: detail(ev, s) };
}

function eventHistory(world: SimWorld, key: string, q: Record<string, string>): Reply {
  allowOnly('error', q, ['limit', 'cursor', 'captured_from', 'captured_to', 'include', 'days', 'exclude_empty_model']);
  const limit = intParam('error', q, 'limit', 50, 1, 200);
  const from = timeParam('error', q, 'captured_from');
  const to = timeParam('error', q, 'captured_to');
  const days = q.days === undefined ? undefined : intParam('error', q, 'days', 1, 1, 100_000);
  const excludeEmpty = boolParam('error', q, 'exclude_empty_model') ?? true;
  const include = (q.include ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  for (const value of include) if (value !== 'analysis') refuse('error', 400, `Unsupported include value: ${value}`, 'invalid_value', 'include');
  const cursor = eventKeyCursor('error', q.cursor);
  const ev = requireEvent(world, key);
  const minClose = days === undefined ? -Infinity : world.now - days * 86_400_000;
  const rows = [];
  let hasMore = false;
  for (let i = ev.snapshots.length - 1; i >= 0; i--) {
    const s = ev.snapshots[i]!;
    if (cursor && s.history_id >= cursor.history_id) continue;
    if (from !== undefined && s.captured_at < from) continue;
    if (to !== undefined && s.captured_at > to) continue;
    if (excludeEmpty && s.model_probability === null) continue;
    if (ev.close_time < minClose) continue;
    if (rows.length === limit) {
      hasMore = true;
      break;
    }
    rows.push(s);
  }
  const last = rows[rows.length - 1];
  return {
    status: 200,
    body: {
      event_ticker: ev.ticker,
      data: rows.map((s) => historyRow(ev, s, include.includes('analysis'))),
      next_cursor: hasMore && last ? encodeCursor({ captured_at: iso(last.captured_at), history_id: last.history_id }) : null,
      has_more: hasMore,
    },
  };
}

// ---- reports ----

function reportEvent(world: SimWorld, venue: string, key: string, missingStatus: number, missingCode: string): SimEvent {
  if (!EVENT_KEY.test(key)) refuse('error', 400, `Malformed event key: ${key}`, 'invalid_value', 'event_key');
  const ev = world.findEvent(key);
  if (!ev || ev.venue !== venue) refuse('error', missingStatus, `No ${venue} event matches ${key}`, missingCode, 'event_key');
  return ev;
}

function findVersion(ev: SimEvent, version: string | undefined) {
  if (version === undefined || version === 'latest') return ev.reports[ev.reports.length - 1];
  return ev.reports.find((v) => v.run_id === version.toLowerCase());
}

function getReport(world: SimWorld, venue: string, key: string, q: Record<string, string>): Reply {
  allowOnly('error', q, ['version']);
  const ev = reportEvent(world, venue, key, 404, 'not_found');
  const version = findVersion(ev, q.version);
  if (!version && q.version !== undefined && q.version !== 'latest') refuse('error', 404, `${q.version} is not a version of ${ev.ticker}`, 'not_found', 'version');
  return { status: 200, body: reportRetrieval(ev, version) };
}

function getTrust(world: SimWorld, venue: string, key: string, q: Record<string, string>): Reply {
  allowOnly('error', q, ['version', 'expand']);
  const expand = new Set((q.expand ?? '').split(',').map((s) => s.trim()).filter(Boolean));
  for (const value of expand) if (value !== 'integrity' && value !== 'trade_quality') refuse('error', 400, `Unknown expand value: ${value}`, 'invalid_value', 'expand');
  const ev = reportEvent(world, venue, key, 404, 'report_not_found');
  if (ev.reports.length === 0) refuse('error', 404, `No report generated yet for ${ev.ticker}`, 'report_not_found', 'event_key');
  const version = findVersion(ev, q.version);
  if (!version) refuse('error', 404, `${q.version} is not a version of ${ev.ticker}`, 'version_not_found', 'version');
  if (version.trust_score === null) refuse('error', 404, `Version ${version.run_id} has no trust index`, 'trust_index_not_found', 'version');
  return { status: 200, body: trustScorecard(ev, version, expand, world.now) };
}

function startGeneration(world: SimWorld, venue: string, key: string, q: Record<string, string>): Reply {
  allowOnly('error', q, []);
  const ev = reportEvent(world, venue, key, 400, `${venue}_url_required`);
  if (ev.eligibility !== 'open' || ev.close_time <= world.now) {
    refuse('error', 409, `The ${venue} market for ${ev.ticker} is not open (${ev.eligibility})`, `${venue}_market_not_open`);
  }
  const run = world.startRun(ev);
  if (run === 'insufficient_credits') refuse('error', 429, 'Fewer than 3 credits left', 'insufficient_credits');
  return { status: 202, body: { run_id: run.run_id, status: 'processing', event_ticker: ev.ticker, venue: ev.venue } };
}

function runStatus(world: SimWorld, runId: string, q: Record<string, string>): Reply {
  allowOnly('error', q, []);
  const run = world.findRun(runId) ?? refuse('error', 404, `Unknown run ${runId}`, 'not_found', 'run_id');
  return {
    status: 200,
    body: { run_id: run.run_id, status: run.status, venue: run.event.venue, event_ticker: run.event.ticker, requested_url: eventUrl(run.event) },
  };
}

// ---- KPI events ----

const KPI_STATUSES = ['all', 'active', 'settled', 'reported'] as const;
const kpiCache = new WeakMap<SimWorld, { stamp: string; lists: Map<string, SimKpi[]> }>();

function sortedKpis(world: SimWorld, status: string, sort: KpiSort, q: string, periods: string[]): SimKpi[] {
  // Sorted lists are reused until the world changes or the minute turns (newsworthiness follows the clock).
  const stamp = `${world.version}|${Math.floor(world.now / 60_000)}`;
  let cache = kpiCache.get(world);
  if (!cache || cache.stamp !== stamp) kpiCache.set(world, (cache = { stamp, lists: new Map() }));
  const key = `${status}|${sort}|${q}|${periods.join(',')}`;
  const hit = cache.lists.get(key);
  if (hit) return hit;
  const needle = q.toLowerCase();
  const rows = world.kpis.filter((k) =>
    (status === 'all' || (status === 'reported' ? isReported(k) : k.status === status)) &&
    (needle === '' || `${k.company.name} ${k.company.ticker} ${k.spec.title}`.toLowerCase().includes(needle)) &&
    (periods.length === 0 || periods.includes(`${k.year}Q${k.quarter}`)));
  const sign = sort === 'report_date' ? 1 : -1;
  const values = new Map(rows.map((k) => [k, kpiSortValue(k, sort, world.now)]));
  rows.sort((a, b) => sign * (values.get(a)! - values.get(b)!) || (a.id < b.id ? -1 : 1));
  cache.lists.set(key, rows);
  return rows;
}

function kpiBoard(world: SimWorld, q: Record<string, string>): Reply {
  const status = q.status ?? 'all';
  if (!(KPI_STATUSES as readonly string[]).includes(status)) refuse('detail', 400, `status must be one of ${KPI_STATUSES.join(', ')}`);
  const sort = (q.sort ?? 'newsworthiness') as KpiSort;
  if (!KPI_SORTS.includes(sort)) refuse('detail', 400, `sort must be one of ${KPI_SORTS.join(', ')}`);
  const limit = intParam('detail', q, 'limit', 50, 1, 200, 422);
  const offset = offsetCursor('detail', q.cursor);
  const periods = (q.period ?? '').split(',').map((s) => s.trim().toUpperCase()).filter(Boolean);
  const rows = sortedKpis(world, status, sort, q.q ?? '', periods);
  const page = rows.slice(offset, offset + limit);
  const hasMore = offset + limit < rows.length;
  return {
    status: 200,
    body: {
      as_of: iso(world.now),
      aggregates: {
        total_events: rows.length,
        total_markets: rows.reduce((sum, k) => sum + k.strike_count, 0),
        total_volume: rows.reduce((sum, k) => sum + k.volume, 0),
      },
      sort,
      status,
      data: page.map((k) => boardRow(k, world.now)),
      next_cursor: hasMore ? encodeCursor({ offset: offset + limit }) : null,
      has_more: hasMore,
    },
  };
}

function kpiEvent(world: SimWorld, id: string, q: Record<string, string>): Reply {
  if (q.include_history !== undefined) boolParam('detail', q, 'include_history');
  const k = world.findKpi(id) ?? refuse('detail', 404, `KPI event not found: ${id}`);
  return { status: 200, body: kpiDetail(k, world.now) };
}

// ---- routing ----

const ROUTES: Route[] = [
  { method: 'GET', pattern: /^\/predictions\/events$/, handler: (w, r) => listEvents(w, r.query) },
  { method: 'GET', pattern: /^\/prediction-markets\/events$/, handler: (w, r) => listEvents(w, r.query) },
  { method: 'GET', pattern: /^\/predictions\/events\/([^/]+)$/, handler: (w, r, [key]) => eventDetail(w, key!, r.query) },
  { method: 'GET', pattern: /^\/predictions\/events\/([^/]+)\/history$/, handler: (w, r, [key]) => eventHistory(w, key!, r.query) },
  { method: 'GET', pattern: /^\/predictions\/reports\/status\/([^/]+)$/, handler: (w, r, [id]) => runStatus(w, id!, r.query) },
  { method: 'GET', pattern: /^\/predictions\/reports\/(venuea|venueb)\/([^/]+)$/, handler: (w, r, [v, key]) => getReport(w, v!, key!, r.query) },
  { method: 'POST', pattern: /^\/predictions\/reports\/(venuea|venueb)\/([^/]+)$/, handler: (w, r, [v, key]) => startGeneration(w, v!, key!, r.query) },
  { method: 'GET', pattern: /^\/predictions\/reports\/(venuea|venueb)\/([^/]+)\/trust$/, handler: (w, r, [v, key]) => getTrust(w, v!, key!, r.query) },
  { method: 'GET', pattern: /^\/predictions\/kpi-events$/, handler: (w, r) => kpiBoard(w, r.query) },
  { method: 'GET', pattern: /^\/predictions\/kpi-events\/([^/]+)$/, handler: (w, r, [id]) => kpiEvent(w, id!, r.query) },
  ...MARKET_ROUTES,
  { method: 'POST', pattern: /^\/responses$/, handler: (w, r) => agentResponse(w, r.body) },
];

function safeDecode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

export function route(world: SimWorld, req: RouteRequest): Reply {
  const family = familyOf(req.path);
  let pathMatched = false;
  for (const { method, pattern, handler } of ROUTES) {
    const match = pattern.exec(req.path);
    if (!match) continue;
    pathMatched = true;
    if (method !== req.method) continue;
    try {
      return handler(world, req, match.slice(1).map(safeDecode));
    } catch (error) {
      if (error instanceof Refusal) return error.reply;
      throw error;
    }
  }
  return pathMatched
    ? { status: 405, body: errorBody(family, 405, `Method ${req.method} not allowed`, 'method_not_allowed') }
    : { status: 404, body: errorBody(family, 404, 'Not Found') };
}
