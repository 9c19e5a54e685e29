// The status page's JSON API over HTTP, served by a daemon run in-process on a sandbox whose world
// the test moves: shapes, filters, paging and errors of every endpoint.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AlertJson, AlertsJson, EntityJson, HistoryJson, RulesJson, SourcesJson } from '../../src/service/api-types.ts';
import { assessHealth } from '../../src/service/health.ts';
import { startHttpServer } from '../../src/service/http.ts';
import { createStatusApi } from '../../src/service/status-api.ts';
import { readAsset, STATUS_PAGE_HTML } from '../../src/service/status-page.ts';
import { openStore } from '../../src/store/index.ts';
import { getJson } from '../helpers/daemon.ts';
import { openSql } from '../helpers/sql.ts';
import { startStatusScene, type StatusScene } from '../helpers/status.ts';
import { waitFor } from '../helpers/wait.ts';

let scene: StatusScene;
let t1: string, t2: string, t3: string;

const api = async <T>(path: string) => {
  const { status, body } = await getJson(`${scene.url}api/${path}`);
  return { status, body: body as T };
};

beforeAll(async () => {
  scene = await startStatusScene(
    ([a, b, c]) => `channels:
  screen: { type: console }
rules:
  - name: edge-over-10
    description: Edge beyond 10 pp
    source: events
    trigger: { type: crosses, field: edge_pp, above: 10, rearm: 2 }
    filter: { event_ticker: [${a}, ${b}, ${c}], confidence_score: { gte: 0 } }
    notify: [screen]
    severity: warning
  - name: edge-moves
    source: events
    trigger: { type: moves, field: edge_pp, by: 5 }
    filter: { event_ticker: ${a} }
    notify: [screen]
    severity: critical
    digest: { cron: "0 18 * * *", timezone: UTC }
`,
    (sandbox, tickers) => {
      for (const ticker of tickers.slice(0, 3)) sandbox.world.updateEvent(ticker, { edge_pp: 0 });
    },
  );
  [t1, t2, t3] = scene.tickers as [string, string, string];
  // Three crossings in three polls (newest last), and one move of t1 that waits for its digest.
  for (const ticker of [t1, t2, t3]) {
    scene.sandbox.world.updateEvent(ticker, { edge_pp: 15 });
    await waitFor(`${ticker} crossed`, () => scene.printed.some((line) => line.includes('edge-over-10') && line.includes(ticker)));
  }
  await waitFor('the digest alert stored', async () => (await api<AlertsJson>('alerts?rule=edge-moves')).body.alerts.length === 1);
}, 60_000);

afterAll(async () => {
  await scene?.close();
});

describe('/api/sources', () => {
  it('lists every source with its state, last success and error, and entities', async () => {
    const { status, body } = await api<SourcesJson>('sources');
    expect(status).toBe(200);
    expect(body.status).toBe('ok');
    expect(body.api).toBe(scene.sandbox.url);
    expect(body.sources.map((s) => s.name)).toEqual(['events', 'kpis', 'reports', 'runs', 'edge', 'rankings', 'markets', 'similar', 'baskets']);
    const events = body.sources.find((s) => s.name === 'events')!;
    expect(events).toMatchObject({ state: 'ok', interval_seconds: 1, last_error: null, recovered: false, key_refused: false, entities: 10 });
    expect(Date.parse(events.last_success_at!)).toBeGreaterThan(0);
  });
});

describe('/api/rules', () => {
  it('gives each rule its trigger in words, threshold, filter, last firing and alerts per hour', async () => {
    const { status, body } = await api<RulesJson>('rules');
    expect(status).toBe(200);
    expect(body.problems).toEqual([]);
    const [crosses, moves] = body.rules;
    expect(crosses).toMatchObject({
      name: 'edge-over-10',
      description: 'Edge beyond 10 pp',
      source: 'events',
      severity: 'warning',
      trigger: { type: 'crosses', field: 'edge_pp', above: 10, rearm: 2, abs: false },
      trigger_text: 'edge_pp crosses above 10, re-arms at 8',
      field: 'edge_pp',
      threshold: { side: 'above', value: 10, rearm_at: 8, abs: false },
      filter: { event_ticker: { in: [t1, t2, t3] }, confidence_score: { gte: 0 } },
      filter_text: `event_ticker in ${t1}, ${t2}, ${t3}, confidence_score ≥ 0`,
      notify: ['screen'],
      digest: null,
      alerts_24h: 3,
    });
    expect(crosses!.firings_per_hour).toHaveLength(24);
    expect(crosses!.firings_per_hour.reduce((a, b) => a + b, 0)).toBe(3);
    expect(crosses!.firings_per_hour.at(-1)! + crosses!.firings_per_hour.at(-2)!).toBe(3); // this hour (or the one before, at the turn of an hour)
    const latest = (await api<AlertsJson>('alerts?rule=edge-over-10&limit=1')).body.alerts[0]!;
    expect(crosses!.last_fired_at).toBe(latest.fired_at);
    expect(moves).toMatchObject({ name: 'edge-moves', trigger_text: 'edge_pp moves by 5 or more', threshold: null, alerts_24h: 1 });
    expect(moves!.digest).toMatchObject({ cron: '0 18 * * *', timezone: 'UTC', waiting_for: 'the 18:00 UTC digest' });
    expect(new Date(moves!.digest!.next_at).getUTCHours()).toBe(18);
  });
});

describe('/api/alerts', () => {
  it('lists alerts newest first in the alerts --json shape', async () => {
    const { status, body } = await api<AlertsJson>('alerts');
    expect(status).toBe(200);
    expect(body.next_before).toBeNull();
    expect(body.alerts).toHaveLength(4);
    const crossings = body.alerts.filter((a) => a.rule === 'edge-over-10').map((a) => a.entity);
    expect(crossings).toEqual([t3, t2, t1]);
    const fired = body.alerts.map((a) => a.fired_at);
    expect(fired).toEqual([...fired].sort().reverse());
    const alert = body.alerts.find((a) => a.entity === t3)!;
    expect(Object.keys(alert).sort()).toEqual(['deliveries', 'entity', 'fired_at', 'id', 'resolved_at', 'rule', 'severity', 'source', 'summary', 'trigger']);
    expect(alert).toMatchObject({ rule: 'edge-over-10', severity: 'warning', source: 'events', trigger: 'crosses' });
    expect(alert.summary).toContain('crossed above 10');
    await waitFor('the crossing delivered', async () => (await api<AlertsJson>(`alerts?entity=${t3}&rule=edge-over-10`)).body.alerts[0]!.deliveries[0]!.status === 'delivered');
  });

  it('filters by rule, entity, severity and delivery status', async () => {
    const entities = async (query: string) => (await api<AlertsJson>(`alerts?${query}`)).body.alerts.map((a: AlertJson) => `${a.rule}:${a.entity}`);
    expect(await entities('rule=edge-moves')).toEqual([`edge-moves:${t1}`]);
    expect(await entities(`entity=${t1}`)).toEqual(expect.arrayContaining([`edge-moves:${t1}`, `edge-over-10:${t1}`]));
    expect(await entities(`entity=${t1}`)).toHaveLength(2);
    expect(await entities('severity=critical')).toEqual([`edge-moves:${t1}`]);
    expect(await entities('severity=warning')).toEqual([t3, t2, t1].map((t) => `edge-over-10:${t}`));
    expect(await entities('status=digest')).toEqual([`edge-moves:${t1}`]);
    expect(await entities(`rule=edge-over-10&entity=${t2}`)).toEqual([`edge-over-10:${t2}`]);
    expect(await entities('rule=no-such-rule')).toEqual([]);
    expect(await entities('rule=&severity=')).toHaveLength(4); // empty parameters count as absent
  });

  it('pages with the before cursor until the last page', async () => {
    const all = (await api<AlertsJson>('alerts')).body.alerts.map((a) => a.id);
    const seen: string[] = [];
    let query = 'alerts?limit=1';
    for (let page = 0; page < 10; page++) {
      const { body } = await api<AlertsJson>(query);
      expect(body.alerts).toHaveLength(1);
      seen.push(body.alerts[0]!.id);
      if (body.next_before === null) break;
      expect(body.next_before).toBe(body.alerts[0]!.id);
      query = `alerts?limit=1&before=${body.next_before}`;
    }
    expect(seen).toEqual(all);
    // A cursor with filters: the warnings older than t3's crossing.
    const t3Crossing = (await api<AlertsJson>(`alerts?entity=${t3}`)).body.alerts[0]!.id;
    const older = await api<AlertsJson>(`alerts?limit=2&severity=warning&before=${t3Crossing}`);
    expect(older.body.alerts.map((a) => a.entity)).toEqual([t2, t1]);
    expect(older.body.next_before).toBeNull();
  });

  it('answers 400 with a JSON error naming the parameter', async () => {
    for (const [query, words] of [
      ['limit=0', 'limit: expected a whole number from 1 to 500, got "0"'],
      ['limit=abc', 'limit:'],
      ['severity=loud', 'severity: expected one of info, warning, critical, got "loud"'],
      ['status=lost', 'status: expected one of pending, delivered, dead, silenced, inhibited, digest'],
      ['before=NOPE', 'before: no alert "NOPE"'],
      ['rules=x', 'unknown parameter "rules"'],
    ] as const) {
      const { status, body } = await getJson(`${scene.url}api/alerts?${query}`);
      expect(status, query).toBe(400);
      expect(body.error.code).toBe('bad_parameter');
      expect(body.error.message).toContain(words);
    }
  });
});

describe('/api/silences', () => {
  it('lists the active silences (none here)', async () => {
    const { status, body } = await api<{ silences: unknown[] }>('silences');
    expect(status).toBe(200);
    expect(body.silences).toEqual([]);
  });
});

describe('/api/entities', () => {
  it('gives the latest snapshot, readable fields, alerts and open alerts', async () => {
    const { status, body } = await api<EntityJson>(`entities/events/${t1}`);
    expect(status).toBe(200);
    expect(body).toMatchObject({ source: 'events', key: t1 });
    expect(body.snapshot.event_ticker).toBe(t1);
    expect(body.snapshot.edge_pp).toBe(15);
    expect(body.fields).toContainEqual({ field: 'edge_pp', text: '+15.0 pp' });
    expect(body.title).toBe(body.snapshot.name);
    expect(body.alerts.map((a) => a.rule).sort()).toEqual(['edge-moves', 'edge-over-10']);
    // The crossing has not re-armed (edge still 15): open. A move has no condition to clear.
    expect(body.open_alerts.map((a) => a.rule)).toEqual(['edge-over-10']);
  });

  it('closes the crossing once the value is back below the re-arm level', async () => {
    scene.sandbox.world.updateEvent(t2, { edge_pp: 7 });
    await waitFor('t2 re-armed', async () => (await api<EntityJson>(`entities/events/${t2}`)).body.open_alerts.length === 0);
  });

  it('gives a field over the stored snapshots, with the alerts fired on it, as stored', async () => {
    const { status, body } = await api<HistoryJson>(`entities/events/${t1}/history?field=edge_pp`);
    expect(status).toBe(200);
    const sql = openSql(scene.dbPath);
    try {
      const stored = sql
        .prepare<[string, string], { seq: number; at: string; data: string }>(
          `SELECT seq, stored_at AS at, data FROM snapshots WHERE source = 'events' AND entity_key = ?
           UNION ALL SELECT seq, updated_at AS at, data FROM entities WHERE source = 'events' AND entity_key = ? ORDER BY seq`,
        )
        .all(t1, t1);
      expect(body.points).toEqual(stored.map((row) => ({ seq: row.seq, at: row.at, value: (JSON.parse(row.data) as { edge_pp: number }).edge_pp })));
    } finally {
      sql.close();
    }
    expect(body.points.at(-1)!.value).toBe(15);
    expect(body.points.at(-2)!.value).toBe(0);
    const fired = body.alerts.map((a) => a.rule).sort();
    expect(fired).toEqual(['edge-moves', 'edge-over-10']);
    expect(body.alerts.every((a) => a.seq === body.points.at(-1)!.seq)).toBe(true);
    // A field no rule watches: its values, no alerts.
    const name = (await api<HistoryJson>(`entities/events/${t1}/history?field=name`)).body;
    expect(name.alerts).toEqual([]);
    expect(typeof name.points[0]!.value).toBe('string');
  });

  it('reads a key holding a slash, encoded or not', async () => {
    for (const path of ['entities/reports/venuea%2FNOPE', 'entities/reports/venuea/NOPE']) {
      const { status, body } = await getJson(`${scene.url}api/${path}`);
      expect(status).toBe(404);
      expect(body.error).toEqual({ code: 'not_found', message: 'no entity "venuea/NOPE" in source "reports"' });
    }
  });

  it('answers 404 for an unknown entity or source and 400 for a history without a field', async () => {
    for (const path of ['entities/events/NOPE', 'entities/events/NOPE/history?field=edge_pp', 'entities/nosource/X']) {
      const { status, body } = await getJson(`${scene.url}api/${path}`);
      expect(status, path).toBe(404);
      expect(body.error.code).toBe('not_found');
    }
    const missing = await getJson(`${scene.url}api/entities/events/${t1}/history`);
    expect(missing.status).toBe(400);
    expect(missing.body.error).toEqual({ code: 'bad_parameter', message: 'field: missing (the snapshot field to chart, e.g. field=edge_pp)' });
  });
});

describe('errors', () => {
  it('answers an unknown path under /api/ with 404 JSON, and a write with 405 JSON', async () => {
    for (const path of ['api/nothing', 'api/', 'api', 'api/alerts/extra']) {
      const response = await fetch(`${scene.url}${path}`);
      expect(response.status, path).toBe(404);
      expect(response.headers.get('content-type')).toContain('application/json');
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('not_found');
    }
    const post = await fetch(`${scene.url}api/alerts`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(await post.json()).toEqual({ error: { code: 'method_not_allowed', message: 'POST /api/alerts: the API is read-only (GET)' } });
  });
});

describe('/api/silences with silences', () => {
  it('lists the active silences it is given', async () => {
    const silence = { id: 'S1', matchers: { rule: 'edge-*', entity: '<b>K</b>' }, starts_at: '2026-11-21T18:00:00Z', ends_at: '2026-11-21T20:00:00Z', comment: 'maintenance', created_by: 'ops' };
    const store = await openStore(scene.dbPath);
    const started = Date.now();
    const server = await startHttpServer({
      port: 0,
      host: '127.0.0.1',
      handlers: {
        health: () => ({ httpStatus: 200, body: {} }),
        metrics: async () => ({ contentType: 'text/plain', text: '' }),
        statusPage: async () => STATUS_PAGE_HTML,
        asset: readAsset,
        api: createStatusApi({
          store,
          now: () => new Date(),
          health: () =>
            assessHealth({
              sources: [],
              rules: { failedAtStart: false, problems: [], loadedAt: '', rules: 0, channels: 0, lastReload: undefined },
              database: { kind: 'sqlite', ok: true, error: null },
              leads: new Map(),
              startedAt: started,
              now: Date.now(),
            }).report,
          rules: () => ({ rules: [], loadedAt: '', problems: [], lastReload: undefined }),
          apiDescription: 'test',
          activeSilences: async () => [silence],
        }),
      },
    });
    try {
      const { status, body } = await getJson(`${server.url}api/silences`);
      expect(status).toBe(200);
      expect(body.silences).toEqual([silence]);
    } finally {
      await server.close();
      await store.close();
    }
  });
});
