// `npm run bench`: speed, memory and delivery figures of edgewatch against a sandbox of 50,000
// events and 5,000 KPI rows, each measure next to its floor (the same pages fetched and parsed,
// nothing else); the baseline and incremental polls on SQLite and on PostgreSQL (a real server:
// EDGEWATCH_TEST_POSTGRES_URL, else an embedded one). Everything runs on 127.0.0.1 and stops by
// itself; see docs/performance.md.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startPostgres, type PostgresServer } from '../test/helpers/postgres.ts';
import { MARKET_SOURCES } from '../src/core/types.ts';
import type { Step, StepResult } from './poll-process.ts';
import { benchMarketRulesYaml, benchRulesYaml, marketSourceOf } from './rules.ts';

const HERE = import.meta.dirname;
const ROOT = path.resolve(HERE, '..');
const EVENTS = Number(process.env.BENCH_EVENTS ?? 50_000);
const KPIS = Number(process.env.BENCH_KPIS ?? 5_000);
const SCALE_SIZES = [5_000, 20_000, EVENTS];
const DELIVERIES = 1_000;
const REPORTS_BUDGET = 50; // EDGEWATCH_REPORTS_BUDGET's default

const TARGETS = { baselineRatio: 1.5, incrementalRatio: 1.2, peakRssMb: 250, deliveryMs: 2000, slopeGrowth: 1.3 };

function log(line: string): void {
  process.stderr.write(`bench: ${line}\n`);
}

// ---- the webhook receiver ----

function startReceiver(): Promise<{ url: string; ids: Set<string>; requests: () => number; close: () => Promise<void> }> {
  const ids = new Set<string>();
  let requests = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      requests++;
      const id = req.headers['webhook-id'];
      if (typeof id === 'string') ids.add(id);
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}/hook`,
        ids,
        requests: () => requests,
        close: () => {
          server.closeAllConnections();
          return new Promise<void>((done) => server.close(() => done()));
        },
      });
    });
  });
}

// ---- the sandbox process ----

interface SandboxProcess {
  url: string;
  mutate(fraction: number): Promise<{ events: number; kpis: number }>;
  close(): Promise<void>;
}

function startSandboxProcess(events: number, kpis: number): Promise<SandboxProcess> {
  const child: ChildProcess = fork(path.join(HERE, 'sandbox-process.ts'), [String(events), String(kpis)], {
    cwd: ROOT,
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const next = (): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      const onExit = (code: number | null): void => reject(new Error(`sandbox process exited (${code})`));
      child.once('exit', onExit);
      child.once('message', (message) => {
        child.off('exit', onExit);
        resolve(message as Record<string, unknown>);
      });
    });
  return next().then((ready) => ({
    url: String(ready.url),
    mutate: async (fraction) => {
      const answer = next();
      child.send({ cmd: 'mutate', fraction });
      const { events: e, kpis: k } = (await answer) as { events: number; kpis: number };
      return { events: e, kpis: k };
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.send({ cmd: 'close' });
      }),
  }));
}

// ---- measured steps, each in a fresh process ----

function runStep(step: Step): Promise<StepResult> {
  return new Promise((resolve, reject) => {
    // BENCH_CPU_PROF=<dir> writes a V8 CPU profile of every step there (open in Chrome DevTools).
    const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(process.env.BENCH_CPU_PROF)] : [];
    const child = spawn(process.execPath, [...profile, '--import', 'tsx', path.join(HERE, 'poll-process.ts'), JSON.stringify(step)], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('exit', (code) => {
      const last = out.trim().split('\n').pop() ?? '';
      if (code !== 0 || !last.startsWith('{')) return reject(new Error(`${step.mode} step failed (exit ${code}):\n${err}${out}`));
      resolve(JSON.parse(last) as StepResult);
    });
  });
}

async function pollAndFloor(step: Extract<Step, { mode: 'poll' }>): Promise<{ poll: StepResult; floor: StepResult }> {
  const poll = await runStep(step);
  if (poll.failures?.length) throw new Error(`poll failed: ${poll.failures.join('; ')}`);
  // The floor fetches exactly what the poll fetched: as many list pages, the same single resources
  // (or, when the poll recorded them, the same requests as sent).
  const floor = await runStep({
    mode: 'floor',
    apiUrl: step.apiUrl,
    eventPages: poll.eventPages ?? 0,
    kpiPages: poll.kpiPages ?? 0,
    singles: poll.requests ? [] : (poll.singles ?? []),
    ...(poll.requests ? { requests: poll.requests } : {}),
  });
  return { poll, floor };
}

/** Tickers the sandbox knows, for the market-search rules: the top of its edge ranking, and markets. */
async function sandboxTickers(apiUrl: string): Promise<{ events: string[]; markets: string[] }> {
  const get = async (path: string) => {
    const response = await fetch(`${apiUrl}/predictions/venuea${path}`, { headers: { authorization: 'Bearer bench' } });
    return ((await response.json()) as { data: Array<Record<string, string>> }).data;
  };
  const events = (await get('/markets-with-edge?limit=150')).map((row) => row.event_ticker!);
  const markets = (await get('/markets?limit=50')).map((row) => row.market_ticker!);
  return { events, markets };
}

/** How many requests each market-search source made. */
function requestsBySource(requests: ReadonlyArray<{ path: string }>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { path: requestPath } of requests) {
    const source = marketSourceOf(requestPath);
    counts[source] = (counts[source] ?? 0) + 1;
  }
  return counts;
}

// ---- the run ----

const dir = mkdtempSync(path.join(os.tmpdir(), 'edgewatch-bench-'));
const rulesDir = path.join(dir, 'rules');
mkdirSync(rulesDir);
const receiver = await startReceiver();
const rules = benchRulesYaml(receiver.url);
writeFileSync(path.join(rulesDir, 'bench.yaml'), rules.yaml);
/** `db`: a SQLite file in the bench's folder, or a PostgreSQL URL. */
const pollStep = (apiUrl: string, db: string, sources?: Extract<Step, { mode: 'poll' }>['sources']): Extract<Step, { mode: 'poll' }> => ({
  mode: 'poll',
  apiUrl,
  db: db.startsWith('postgres://') ? db : path.join(dir, db),
  rulesDir,
  reportsBudget: REPORTS_BUDGET,
  ...(sources ? { sources } : {}),
});

const round = (x: number, digits = 2): number => Math.round(x * 10 ** digits) / 10 ** digits;
const scaling: Array<{ events: number; ms: number; floorMs: number; ratio: number; msPer1kEvents: number; maxRssMb: number }> = [];

/** A poll on PostgreSQL, beside the same poll on SQLite (same pages: its floor is theirs). */
async function pollOnPostgres(step: Extract<Step, { mode: 'poll' }>): Promise<StepResult> {
  const poll = await runStep(step);
  if (poll.failures?.length) throw new Error(`poll on PostgreSQL failed: ${poll.failures.join('; ')}`);
  return poll;
}

let sandbox: SandboxProcess | undefined;
let postgres: PostgresServer | undefined;
try {
  log('PostgreSQL server starting');
  postgres = await startPostgres({ durable: true });
  const postgresDb = await postgres.createDatabase();

  log(`${rules.count} rules; sandbox of ${EVENTS} events and ${KPIS} KPI rows starting`);
  sandbox = await startSandboxProcess(EVENTS, KPIS);

  log('baseline poll (fresh database)');
  const baseline = await pollAndFloor(pollStep(sandbox.url, 'main.db'));
  log('baseline poll on PostgreSQL (fresh database)');
  const postgresBaseline = await pollOnPostgres(pollStep(sandbox.url, postgresDb));

  // Reading the tickers also builds the sandbox's market-search view, so that neither the poll
  // nor its floor pays for it.
  const marketRules = benchMarketRulesYaml(receiver.url, await sandboxTickers(sandbox.url));
  const marketRulesDir = path.join(dir, 'rules-markets');
  mkdirSync(marketRulesDir);
  writeFileSync(path.join(marketRulesDir, 'bench.yaml'), marketRules.yaml);
  log(`market-search poll: ${marketRules.count} rules over ${MARKET_SOURCES.join(', ')} (fresh database)`);
  const marketStep = { ...pollStep(sandbox.url, 'markets.db', [...MARKET_SOURCES]), rulesDir: marketRulesDir, recordRequests: true };
  // The sandbox computes a search or a ranking once per refresh: a first, unmeasured poll does it,
  // so that the measured poll and its floor both find it done.
  const warmup = await runStep({ ...marketStep, db: path.join(dir, 'markets-warmup.db') });
  const marketPoll = await pollAndFloor(marketStep);

  log(`scaling: events-only baseline at ${EVENTS}`);
  const scaleTop = await pollAndFloor(pollStep(sandbox.url, `scale-${EVENTS}.db`, ['events']));

  const moved = await sandbox.mutate(0.05);
  log(`moved ${moved.events} events and ${moved.kpis} KPI rows; incremental poll`);
  const incremental = await pollAndFloor(pollStep(sandbox.url, 'main.db'));
  log('incremental poll on PostgreSQL');
  const postgresIncremental = await pollOnPostgres(pollStep(sandbox.url, postgresDb));
  log('market-search poll after the move (the market data refreshed)');
  await runStep({ mode: 'floor', apiUrl: sandbox.url, eventPages: 0, kpiPages: 0, singles: [], requests: warmup.requests ?? [] });
  const marketIncremental = await pollAndFloor(marketStep);
  await sandbox.close();
  sandbox = undefined;

  const scaleRuns = new Map<number, { poll: StepResult; floor: StepResult }>([[EVENTS, scaleTop]]);
  for (const size of SCALE_SIZES.filter((s) => s !== EVENTS)) {
    log(`scaling: events-only baseline at ${size}`);
    sandbox = await startSandboxProcess(size, KPIS);
    scaleRuns.set(size, await pollAndFloor(pollStep(sandbox.url, `scale-${size}.db`, ['events'])));
    await sandbox.close();
    sandbox = undefined;
  }
  for (const size of SCALE_SIZES) {
    const run = scaleRuns.get(size)!;
    scaling.push({
      events: size,
      ms: round(run.poll.ms, 0),
      floorMs: round(run.floor.ms, 0),
      ratio: round(run.poll.ms / run.floor.ms),
      msPer1kEvents: round(run.poll.ms / (size / 1000), 1),
      maxRssMb: round(run.poll.maxRssMb, 0),
    });
  }
  // Linear: the cost of each further 1,000 events does not grow with the size.
  const [small, middle, large] = scaling;
  const slopeLow = (middle!.ms - small!.ms) / ((middle!.events - small!.events) / 1000);
  const slopeHigh = (large!.ms - middle!.ms) / ((large!.events - middle!.events) / 1000);
  const slopeGrowth = slopeHigh / slopeLow;

  log(`delivery: ${DELIVERIES} alerts to the local webhook`);
  const deliveryStep: Step = { mode: 'deliver', db: path.join(dir, 'deliver.db'), rulesDir, templatesDir: path.join(ROOT, 'templates'), alerts: DELIVERIES };
  const delivery = await runStep(deliveryStep);

  const results = {
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model ?? 'unknown', memoryGb: round(os.totalmem() / 2 ** 30, 1), node: process.version, platform: `${os.platform()} ${os.release()}` },
    size: { events: EVENTS, kpis: KPIS, rules: rules.count },
    baseline: {
      ms: round(baseline.poll.ms, 0),
      floorMs: round(baseline.floor.ms, 0),
      ratio: round(baseline.poll.ms / baseline.floor.ms),
      maxRssMb: round(baseline.poll.maxRssMb, 0),
      floorMaxRssMb: round(baseline.floor.maxRssMb, 0),
      changed: baseline.poll.changed,
      alerts: baseline.poll.alerts,
      pages: { events: baseline.poll.eventPages, kpis: baseline.poll.kpiPages, singles: baseline.poll.singles?.length },
    },
    incremental: {
      moved,
      ms: round(incremental.poll.ms, 0),
      floorMs: round(incremental.floor.ms, 0),
      ratio: round(incremental.poll.ms / incremental.floor.ms),
      maxRssMb: round(incremental.poll.maxRssMb, 0),
      changed: incremental.poll.changed,
      alerts: incremental.poll.alerts,
      pages: { events: incremental.poll.eventPages, kpis: incremental.poll.kpiPages, singles: incremental.poll.singles?.length },
    },
    marketSearch: {
      rules: marketRules.count,
      requests: marketPoll.poll.requests?.length,
      requestsBySource: requestsBySource(marketPoll.poll.requests ?? []),
      ms: round(marketPoll.poll.ms, 0),
      floorMs: round(marketPoll.floor.ms, 0),
      ratio: round(marketPoll.poll.ms / marketPoll.floor.ms),
      maxRssMb: round(marketPoll.poll.maxRssMb, 0),
      changed: marketPoll.poll.changed,
      notices: marketPoll.poll.notices,
      incremental: {
        requests: marketIncremental.poll.requests?.length,
        ms: round(marketIncremental.poll.ms, 0),
        floorMs: round(marketIncremental.floor.ms, 0),
        ratio: round(marketIncremental.poll.ms / marketIncremental.floor.ms),
        changed: marketIncremental.poll.changed,
        alerts: marketIncremental.poll.alerts,
      },
    },
    delivery: {
      alerts: DELIVERIES,
      ms: round(delivery.ms, 0),
      perSecond: round((delivery.delivered ?? 0) / (delivery.ms / 1000), 0),
      delivered: delivery.delivered,
      dead: delivery.dead,
      retrying: delivery.retrying,
      receivedRequests: receiver.requests(),
      receivedDistinctIds: receiver.ids.size,
    },
    postgres: {
      baseline: {
        ms: round(postgresBaseline.ms, 0),
        ratio: round(postgresBaseline.ms / baseline.floor.ms),
        maxRssMb: round(postgresBaseline.maxRssMb, 0),
        changed: postgresBaseline.changed,
        alerts: postgresBaseline.alerts,
      },
      incremental: {
        ms: round(postgresIncremental.ms, 0),
        ratio: round(postgresIncremental.ms / incremental.floor.ms),
        maxRssMb: round(postgresIncremental.maxRssMb, 0),
        changed: postgresIncremental.changed,
        alerts: postgresIncremental.alerts,
      },
    },
    scaling: { runs: scaling, slopeLowMsPer1k: round(slopeLow, 1), slopeHighMsPer1k: round(slopeHigh, 1), slopeGrowth: round(slopeGrowth) },
    targets: TARGETS,
  };

  const met = (ok: boolean): string => (ok ? 'met' : 'MISSED');
  const rows: string[][] = [
    ['measure', 'value', 'floor', 'ratio', 'target', 'status'],
    ['baseline poll', `${results.baseline.ms} ms`, `${results.baseline.floorMs} ms`, `${results.baseline.ratio}x`, `<= ${TARGETS.baselineRatio}x`, met(results.baseline.ratio <= TARGETS.baselineRatio)],
    ['baseline peak RSS', `${results.baseline.maxRssMb} MB`, `${results.baseline.floorMaxRssMb} MB`, '', `< ${TARGETS.peakRssMb} MB`, met(results.baseline.maxRssMb < TARGETS.peakRssMb)],
    [`incremental poll (${results.incremental.alerts} alerts)`, `${results.incremental.ms} ms`, `${results.incremental.floorMs} ms`, `${results.incremental.ratio}x`, `<= ${TARGETS.incrementalRatio}x`, met(results.incremental.ratio <= TARGETS.incrementalRatio)],
    ['baseline poll on PostgreSQL', `${results.postgres.baseline.ms} ms`, `${results.baseline.floorMs} ms`, `${results.postgres.baseline.ratio}x`, `SQLite ${results.baseline.ratio}x`, ''],
    [
      `incremental poll on PostgreSQL (${results.postgres.incremental.alerts} alerts)`,
      `${results.postgres.incremental.ms} ms`,
      `${results.incremental.floorMs} ms`,
      `${results.postgres.incremental.ratio}x`,
      `SQLite ${results.incremental.ratio}x`,
      '',
    ],
    [`market-search baseline poll (${results.marketSearch.rules} rules, ${results.marketSearch.requests} requests)`, `${results.marketSearch.ms} ms`, `${results.marketSearch.floorMs} ms`, `${results.marketSearch.ratio}x`, '', ''],
    [
      `market-search poll after the move (${results.marketSearch.incremental.requests} requests, ${results.marketSearch.incremental.alerts} alerts)`,
      `${results.marketSearch.incremental.ms} ms`,
      `${results.marketSearch.incremental.floorMs} ms`,
      `${results.marketSearch.incremental.ratio}x`,
      '',
      '',
    ],
    [`${DELIVERIES} webhook deliveries`, `${results.delivery.ms} ms`, '', `${results.delivery.perSecond}/s`, `< ${TARGETS.deliveryMs} ms`, met(results.delivery.ms < TARGETS.deliveryMs && results.delivery.receivedDistinctIds === DELIVERIES)],
    ...scaling.map((s) => [`events-only baseline ${s.events}`, `${s.ms} ms`, `${s.floorMs} ms`, `${s.ratio}x`, `${s.msPer1kEvents} ms/1k ev`, '']),
    ['scaling (ms per 1k events, 20k-50k vs 5k-20k)', `${round(slopeHigh, 1)} vs ${round(slopeLow, 1)}`, '', `${round(slopeGrowth)}x`, `<= ${TARGETS.slopeGrowth}x (linear)`, met(slopeGrowth <= TARGETS.slopeGrowth)],
  ];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const text = rows.map((r) => r.map((cell, c) => cell.padEnd(widths[c]!)).join('  ').trimEnd());
  text.splice(1, 0, widths.map((w) => '-'.repeat(w)).join('  '));
  process.stdout.write(`\n${text.join('\n')}\n\n`);

  const out = path.join(HERE, process.env.BENCH_OUT ?? 'results.json');
  writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`figures written to ${out}\n`);
} finally {
  await sandbox?.close();
  await postgres?.stop();
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
}
