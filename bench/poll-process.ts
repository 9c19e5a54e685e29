// One measured step of the bench, in a fresh process (cold, like `poll --once`), so that its peak
// resident memory is its own. The step comes as JSON in argv[2]; the figures go back as one JSON
// line on stdout.
//   poll:    pollSources on a database (fresh or not), timing only the poll itself; with
//            `recordRequests`, every request as sent (method, path and query, body)
//   floor:   the same pages fetched with plain undici requests and JSON.parse, nothing else
//   deliver: 1,000 alerts stored through ingestItems, then delivered by deliverNow to the webhook
import { Agent, request } from 'undici';
import { createApiClient } from '../src/api/index.ts';
import type { SnapshotItem, SourceName } from '../src/core/types.ts';
import type { Rule } from '../src/rules/index.ts';
import { CREDENTIAL_VARIABLES, readConfig } from '../src/config.ts';
import { loadTemplates } from '../src/render/index.ts';
import { loadRules } from '../src/rules/index.ts';
import { ingestItems, pollSources } from '../src/service/cycle.ts';
import { deliverNow } from '../src/service/deliver.ts';
import { createChannelSender } from '../src/service/senders.ts';
import { openStore } from '../src/store/index.ts';

/** A request as the client sent it: `path` with its query string, relative to the API root. */
export interface RecordedRequest {
  method: string;
  path: string;
  body?: string;
}

export type Step =
  | { mode: 'poll'; apiUrl: string; db: string; rulesDir: string; sources?: SourceName[]; reportsBudget: number; recordRequests?: boolean }
  | { mode: 'floor'; apiUrl: string; eventPages: number; kpiPages: number; singles: string[]; requests?: RecordedRequest[] }
  | { mode: 'deliver'; db: string; rulesDir: string; templatesDir: string; alerts: number };

export interface StepResult {
  ms: number;
  maxRssMb: number;
  alerts?: number;
  changed?: number;
  failures?: string[];
  /** poll: what it fetched, for the floor to fetch the same. */
  eventPages?: number;
  kpiPages?: number;
  singles?: string[];
  /** poll with recordRequests: every request, for the floor to send again. */
  requests?: RecordedRequest[];
  /** poll: its sources' notices (a query over its page budget, data not synced). */
  notices?: string[];
  delivered?: number;
  dead?: number;
  retrying?: number;
}

const PAGE_SIZE = 200;
const KEY = 'bench';

async function loadBenchRules(rulesDir: string) {
  const ruleSet = await loadRules(rulesDir, { env: {}, credentials: CREDENTIAL_VARIABLES, templates: new Set(), transports: { slack: false, email: false } });
  if (ruleSet.problems.length > 0) throw new Error(`bench rules invalid: ${JSON.stringify(ruleSet.problems[0])}`);
  return ruleSet;
}

async function poll(step: Extract<Step, { mode: 'poll' }>): Promise<StepResult> {
  const store = await openStore(step.db);
  const ruleSet = await loadBenchRules(step.rulesDir);
  let eventPages = 0;
  let kpiPages = 0;
  const singles: string[] = [];
  const requests: RecordedRequest[] = [];
  const root = new URL(step.apiUrl).pathname.replace(/\/$/, '');
  // Records each request as it goes on the wire: what the floor sends again.
  const agent = new Agent({ connections: 8, keepAliveTimeout: 30_000 });
  const dispatcher = step.recordRequests
    ? agent.compose((dispatch) => (opts, handler) => {
        const body = typeof opts.body === 'string' ? opts.body : undefined;
        requests.push({ method: opts.method, path: opts.path.slice(root.length), ...(body === undefined ? {} : { body }) });
        return dispatch(opts, handler);
      })
    : agent;
  const api = createApiClient({
    baseUrl: step.apiUrl,
    apiKey: KEY,
    dispatcher,
    onRequest: (info) => {
      if (info.path === '/predictions/events') eventPages++;
      else if (info.path === '/predictions/kpi-events') kpiPages++;
      else singles.push(info.path);
    },
  });
  const started = performance.now();
  const report = await pollSources({
    store,
    api,
    rules: ruleSet.rules,
    now: () => new Date(),
    reportsBudget: step.reportsBudget,
    ...(step.sources ? { sources: step.sources } : {}),
  });
  const ms = performance.now() - started;
  await api.close();
  await agent.close();
  await store.close();
  return {
    ms,
    maxRssMb: process.resourceUsage().maxRSS / 1024,
    alerts: report.alerts.length,
    changed: report.results.reduce((sum, r) => sum + r.changed, 0),
    failures: report.failures.map((f) => `${f.source}: ${f.error}`),
    eventPages,
    kpiPages,
    singles,
    ...(step.recordRequests ? { requests, notices: report.results.flatMap((r) => r.notices) } : {}),
  };
}

async function floor(step: Extract<Step, { mode: 'floor' }>): Promise<StepResult> {
  const dispatcher = new Agent({ connections: 8, keepAliveTimeout: 30_000 });
  const headers = { accept: 'application/json', authorization: `Bearer ${KEY}` };
  const getJson = async (pathAndQuery: string): Promise<Record<string, unknown>> => {
    const response = await request(`${step.apiUrl}${pathAndQuery}`, { dispatcher, headers });
    return JSON.parse(await response.body.text()) as Record<string, unknown>;
  };
  const chain = async (path: string, query: string, pages: number): Promise<void> => {
    let cursor: string | null = null;
    for (let i = 0; i < pages; i++) {
      const body = await getJson(`${path}?${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      cursor = body.next_cursor as string | null;
      if (!body.has_more) break;
    }
  };
  const started = performance.now();
  // As the poll does: the events and the KPI board side by side, then the single resources
  // (report checks, KPI details), eight at a time like the client.
  await Promise.all([
    chain('/predictions/events', `limit=${PAGE_SIZE}&include=eligibility`, step.eventPages),
    chain('/predictions/kpi-events', `status=all&limit=${PAGE_SIZE}`, step.kpiPages),
  ]);
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < step.singles.length) await getJson(step.singles[next++]!).catch(() => undefined);
    }),
  );
  // Requests recorded as sent (the market-search sources' GETs and POSTs), as fast as they can go:
  // the pages of one list in order (each needs the cursor of the one before), every list and
  // single request side by side, eight connections as the client has.
  const walks = new Map<string, RecordedRequest[]>();
  for (const recorded of step.requests ?? []) {
    const walk = `${recorded.method} ${recorded.path.replace(/[?&]cursor=[^&]*/, '')} ${recorded.body ?? ''}`;
    walks.set(walk, [...(walks.get(walk) ?? []), recorded]);
  }
  await Promise.all(
    [...walks.values()].map(async (requests) => {
      for (const { method, path, body } of requests) {
        const response = await request(`${step.apiUrl}${path}`, { dispatcher, method: method as 'GET' | 'POST', headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' }, body });
        JSON.parse(await response.body.text());
      }
    }),
  );
  const ms = performance.now() - started;
  await dispatcher.close();
  return { ms, maxRssMb: process.resourceUsage().maxRSS / 1024 };
}

async function deliver(step: Extract<Step, { mode: 'deliver' }>): Promise<StepResult> {
  const store = await openStore(step.db);
  const ruleSet = await loadBenchRules(step.rulesDir);
  const templates = await loadTemplates(step.templatesDir);
  const rule: Rule | undefined = ruleSet.rules.find((r) => r.source === 'events' && r.trigger.type === 'new');
  if (!rule) throw new Error('bench rules have no events `new` rule');
  // A baseline of nothing, then `alerts` new entities: one alert (and one webhook delivery) each.
  const now = new Date(Date.now() - 1000);
  for (let offset = 0; offset < step.alerts; offset += PAGE_SIZE) {
    const items: SnapshotItem[] = [];
    for (let i = offset; i < Math.min(step.alerts, offset + PAGE_SIZE); i++) {
      const ticker = `BENCH-${String(i).padStart(5, '0')}`;
      items.push({ key: ticker, data: { event_ticker: ticker, name: `Bench event ${i}`, edge_pp: (i % 40) - 20, abs_edge_pp: Math.abs((i % 40) - 20) } });
    }
    await ingestItems(store, 'events', items, [rule], now, { baseline: false });
  }
  const config = readConfig({ EDGEWATCH_DB: step.db, EDGEWATCH_RULES: step.rulesDir, EDGEWATCH_TEMPLATES: step.templatesDir });
  const started = performance.now();
  const send = createChannelSender({ config, templates, rules: ruleSet.rules, out: () => undefined });
  const report = await deliverNow(store, config, ruleSet, send);
  const ms = performance.now() - started;
  await store.close();
  return { ms, maxRssMb: process.resourceUsage().maxRSS / 1024, ...report };
}

const step = JSON.parse(process.argv[2]!) as Step;
const result = step.mode === 'poll' ? await poll(step) : step.mode === 'floor' ? await floor(step) : await deliver(step);
process.stdout.write(`${JSON.stringify(result)}\n`);
// Keep-alive sockets of the webhook sender must not hold the process open.
process.exit(0);
