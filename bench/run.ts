// `npm run bench`: speed, memory and delivery figures of edgewatch against a sandbox of 50,000
// events and 5,000 KPI rows, each measure next to its floor (the same pages fetched and parsed,
// nothing else), and the cold starts of the command line as scripts call it (`validate`,
// `alerts --json`, `poll --once`), each next to issue 16's target with its status; the baseline and
// incremental polls on PostgreSQL too (a real server: EDGEWATCH_TEST_POSTGRES_URL, else an embedded
// one). Everything runs on 127.0.0.1 and stops by itself; see docs/performance.md.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { SandboxRequest } from '../src/sandbox/index.ts';
import { MARKET_SOURCES, SOURCES } from '../src/core/types.ts';
import { startPostgres, type PostgresServer } from '../test/helpers/postgres.ts';
import { build } from 'esbuild';
import type { Step, StepResult } from './poll-process.ts';
import { benchMarketRulesYaml, benchRulesYaml, marketSourceOf } from './rules.ts';

const HERE = import.meta.dirname;
const round = (x: number, digits = 2): number => Math.round(x * 10 ** digits) / 10 ** digits;
const ROOT = path.resolve(HERE, '..');
const EVENTS = Number(process.env.BENCH_EVENTS ?? 50_000);
const KPIS = Number(process.env.BENCH_KPIS ?? 5_000);
const COLD_EVENTS = 20_000; // the sandbox `poll --once` runs against when nothing changed
const SCALE_SIZES = [5_000, COLD_EVENTS, EVENTS];
const DELIVERIES = 1_000;
const REPORTS_BUDGET = 50; // EDGEWATCH_REPORTS_BUDGET's default
const BIN = path.join(ROOT, 'bin/edgewatch.js');
const PEAK_RSS = path.join(HERE, 'peak-rss.mjs');
const EXAMPLE_RULES = path.join(ROOT, 'rules');
const TEMPLATES = path.join(ROOT, 'templates');
// The sources the storm polls: the example rules' market-search ones are measured on their own rows.
const CORE_SOURCES = SOURCES.filter((source) => !(MARKET_SOURCES as readonly string[]).includes(source));

// Issue 16's targets.
const TARGETS = {
  validateMs: 250,
  validateRssMb: 90,
  alertsMs: 300,
  pollOnceRatio: 2,
  baselineRatio: 1.5,
  peakRssMb: 150,
  quietRatio: 1.3,
  stormRatio: 3,
  slopeGrowth: 1.3,
  deliveryMs: 2000,
};

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
  mutate(fraction: number, kind: 'storm' | 'quiet'): Promise<{ events: number; kpis: number }>;
  /** The requests served since the last call. */
  requests(): Promise<SandboxRequest[]>;
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
    mutate: async (fraction, kind) => {
      const answer = next();
      child.send({ cmd: 'mutate', fraction, kind });
      const { events: e, kpis: k } = (await answer) as { events: number; kpis: number };
      return { events: e, kpis: k };
    },
    requests: async () => {
      const answer = next();
      child.send({ cmd: 'requests' });
      return ((await answer) as { requests: SandboxRequest[] }).requests;
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

/**
 * The measured steps run compiled, as users run edgewatch (dist/), not through the TypeScript
 * loader, which alone adds ~35 MB to a process's peak RSS. Bundled like scripts/build.js, two
 * folders below dist/, so that the store finds the compiled migrations (dist/migrations).
 */
const STEP_PROCESS = path.join(ROOT, 'dist/bench/steps/poll-process.js');
async function buildStepProcess(): Promise<void> {
  await build({
    entryPoints: [path.join(HERE, 'poll-process.ts')],
    outfile: STEP_PROCESS,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: ['better-sqlite3', 'pino', 'pino-pretty', 'node-cron'],
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
    logLevel: 'warning',
  });
}

function runStep(step: Step): Promise<StepResult> {
  return new Promise((resolve, reject) => {
    // BENCH_CPU_PROF=<dir> writes a V8 CPU profile of every step there (open in Chrome DevTools).
    const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(process.env.BENCH_CPU_PROF)] : [];
    const child = spawn(process.execPath, [...profile, STEP_PROCESS, JSON.stringify(step)], {
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

/** The floor of a command line's poll: exactly the requests the sandbox served it. */
function floorOf(apiUrl: string, requests: SandboxRequest[]): Extract<Step, { mode: 'floor' }> {
  const inner = requests.map((r) => ({ path: r.path.replace(/^\/v1/, ''), query: new URLSearchParams(r.query).toString() }));
  const singles = inner.filter((r) => r.path !== '/predictions/events' && r.path !== '/predictions/kpi-events');
  return {
    mode: 'floor',
    apiUrl,
    eventPages: inner.filter((r) => r.path === '/predictions/events').length,
    kpiPages: inner.filter((r) => r.path === '/predictions/kpi-events').length,
    singles: singles.map((r) => (r.query ? `${r.path}?${r.query}` : r.path)),
  };
}

// ---- cold starts of the command line, as scripts call it ----

interface ColdStart {
  /** The fastest run: the figure least disturbed by other load. */
  wallMs: number;
  /** The median run's peak resident memory. */
  maxRssMb: number;
  runs: number;
}

/** One start of `node <args>` in a fresh process, timed from spawn to exit, process start included. */
function startOnce(args: string[], env: Record<string, string>): Promise<{ wallMs: number; maxRssMb: number }> {
  const rssFile = path.join(dir, 'peak-rss.txt');
  return new Promise((resolve, reject) => {
    const started = performance.now();
    // The temporary folder as working folder: no developer's .env is read.
    const child = spawn(process.execPath, ['--import', PEAK_RSS, ...args], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', ...env, BENCH_PEAK_RSS_TO: rssFile },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('exit', (code) => {
      const wallMs = performance.now() - started;
      if (code !== 0) return reject(new Error(`node ${args.join(' ')} exited ${code}:\n${err}`));
      resolve({ wallMs, maxRssMb: Number(readFileSync(rssFile, 'utf8')) / 1024 });
    });
  });
}

function summarize(samples: Array<{ wallMs: number; maxRssMb: number }>): ColdStart {
  const rss = samples.map((s) => s.maxRssMb).sort((a, b) => a - b);
  return { wallMs: round(Math.min(...samples.map((s) => s.wallMs)), 0), maxRssMb: round(rss[Math.floor(rss.length / 2)]!, 0), runs: samples.length };
}

/** A warm-up start (disk cache), then `runs` measured ones. */
async function coldStart(args: string[], env: Record<string, string>, runs = 7): Promise<ColdStart> {
  await startOnce(args, env);
  const samples = [];
  for (let i = 0; i < runs; i++) samples.push(await startOnce(args, env));
  return summarize(samples);
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

if (!existsSync(path.join(ROOT, 'dist/src/cli/main.js'))) throw new Error('dist/ is missing: run `npm run build` (npm run bench does)');
await buildStepProcess();

const dir = mkdtempSync(path.join(os.tmpdir(), 'edgewatch-bench-'));
const rulesDir = path.join(dir, 'rules');
mkdirSync(rulesDir);
const receiver = await startReceiver();
const rules = benchRulesYaml(receiver.url);
writeFileSync(path.join(rulesDir, 'bench.yaml'), rules.yaml);
const pollStep = (
  apiUrl: string,
  db: string,
  sources?: Extract<Step, { mode: 'poll' }>['sources'],
  rulesIn = rulesDir,
): Extract<Step, { mode: 'poll' }> => ({
  mode: 'poll',
  apiUrl,
  db: db.startsWith('postgres://') ? db : path.join(dir, db),
  rulesDir: rulesIn,
  reportsBudget: REPORTS_BUDGET,
  ...(sources ? { sources } : {}),
});

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
  // First, while nothing else of the bench runs: the starts that need no sandbox.
  log('cold starts: node -e 0, validate (the example rules)');
  const nodeAlone = await coldStart(['-e', '0'], {});
  const validate = await coldStart([BIN, 'validate'], { EDGEWATCH_RULES: EXAMPLE_RULES, EDGEWATCH_TEMPLATES: TEMPLATES });

  log('PostgreSQL server starting');
  postgres = await startPostgres({ durable: true });
  const postgresDb = await postgres.createDatabase();

  log(`${rules.count} rules; sandbox of ${EVENTS} events and ${KPIS} KPI rows starting`);
  sandbox = await startSandboxProcess(EVENTS, KPIS);

  log('baseline poll (fresh database)');
  const baseline = await pollAndFloor(pollStep(sandbox.url, 'main.db'));
  log('baseline poll on PostgreSQL (fresh database)');
  const postgresBaseline = await pollOnPostgres(pollStep(sandbox.url, postgresDb));
  log('baseline of the quiet database (the example rules), not measured');
  await runStep(pollStep(sandbox.url, 'quiet.db', CORE_SOURCES, EXAMPLE_RULES));

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

  // Quiet first: the example rules' database polls it, measured; the bench rules' database too, not
  // measured, so that the storm that follows is all it sees next.
  const movedQuietly = await sandbox.mutate(0.05, 'quiet');
  log(`quiet move of ${movedQuietly.events} events and ${movedQuietly.kpis} KPI rows; incremental poll (example rules)`);
  const quiet = await pollAndFloor(pollStep(sandbox.url, 'quiet.db', CORE_SOURCES, EXAMPLE_RULES));
  await runStep(pollStep(sandbox.url, 'main.db'));
  await pollOnPostgres(pollStep(sandbox.url, postgresDb));
  const moved = await sandbox.mutate(0.05, 'storm');
  log(`storm: moved ${moved.events} events and ${moved.kpis} KPI rows; incremental poll (bench rules)`);
  const incremental = await pollAndFloor(pollStep(sandbox.url, 'main.db'));
  log('incremental poll on PostgreSQL (the storm)');
  const postgresIncremental = await pollOnPostgres(pollStep(sandbox.url, postgresDb));
  log('market-search poll after the move (the market data refreshed)');
  await runStep({ mode: 'floor', apiUrl: sandbox.url, eventPages: 0, kpiPages: 0, singles: [], requests: warmup.requests ?? [] });
  const marketIncremental = await pollAndFloor(marketStep);
  await sandbox.close();
  sandbox = undefined;

  /** `poll --once` of the command line, nothing changed since its last poll, against its floor. */
  const pollOnceNothingChanged = async (sandbox: SandboxProcess): Promise<{ start: ColdStart; floorMs: number; requests: number }> => {
    log(`cold start: poll --once, nothing changed (${COLD_EVENTS} events)`);
    const env = {
      EDGEWATCH_API_URL: sandbox.url,
      EDGEWATCH_API_KEY: 'bench',
      EDGEWATCH_DB: path.join(dir, 'cold.db'),
      EDGEWATCH_RULES: rulesDir,
      EDGEWATCH_TEMPLATES: TEMPLATES,
    };
    await startOnce([BIN, 'poll', '--once'], env); // the baseline
    const samples = [];
    let requests: SandboxRequest[] = [];
    for (let i = 0; i < 3; i++) {
      await sandbox.requests();
      samples.push(await startOnce([BIN, 'poll', '--once'], env));
      requests = await sandbox.requests();
    }
    const floors = [];
    for (let i = 0; i < 3; i++) floors.push((await runStep(floorOf(sandbox.url, requests))).ms);
    return { start: summarize(samples), floorMs: Math.min(...floors), requests: requests.length };
  };
  let pollOnce: Awaited<ReturnType<typeof pollOnceNothingChanged>> | undefined;
  const scaleRuns = new Map<number, { poll: StepResult; floor: StepResult }>([[EVENTS, scaleTop]]);
  for (const size of SCALE_SIZES.filter((s) => s !== EVENTS)) {
    log(`scaling: events-only baseline at ${size}`);
    sandbox = await startSandboxProcess(size, KPIS);
    scaleRuns.set(size, await pollAndFloor(pollStep(sandbox.url, `scale-${size}.db`, ['events'])));
    if (size === COLD_EVENTS) pollOnce = await pollOnceNothingChanged(sandbox);
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
  log(`cold start: alerts --json --limit ${DELIVERIES} (${DELIVERIES} alerts stored)`);
  const alertsJson = await coldStart([BIN, 'alerts', '--json', '--limit', String(DELIVERIES)], { EDGEWATCH_DB: deliveryStep.db });
  if (!pollOnce) throw new Error(`no scaling run at ${COLD_EVENTS} events (BENCH_EVENTS must be above it)`);

  const incrementalFigures = (run: { poll: StepResult; floor: StepResult }, moved: { events: number; kpis: number }) => ({
    moved,
    ms: round(run.poll.ms, 0),
    floorMs: round(run.floor.ms, 0),
    ratio: round(run.poll.ms / run.floor.ms),
    maxRssMb: round(run.poll.maxRssMb, 0),
    changed: run.poll.changed,
    alerts: run.poll.alerts,
    pages: { events: run.poll.eventPages, kpis: run.poll.kpiPages, singles: run.poll.singles?.length },
  });
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
    coldStart: {
      nodeAlone,
      validate,
      alertsJson: { ...alertsJson, alerts: DELIVERIES },
      pollOnce: {
        events: COLD_EVENTS,
        ...pollOnce.start,
        floorMs: round(pollOnce.floorMs, 0),
        ratio: round(pollOnce.start.wallMs / pollOnce.floorMs),
        requests: pollOnce.requests,
      },
    },
    incremental: incrementalFigures(incremental, moved),
    quiet: incrementalFigures(quiet, movedQuietly),
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
  const { coldStart: cold, quiet: q, incremental: storm } = results;
  const start = (c: ColdStart): string => `${c.wallMs} ms, ${c.maxRssMb} MB`;
  const rows: string[][] = [
    ['measure', 'value', 'floor', 'ratio', 'target', 'status'],
    ['node -e 0 (the start of any process)', start(cold.nodeAlone), '', '', '', ''],
    ['validate, example rules, cold', start(cold.validate), '', '', `<= ${TARGETS.validateMs} ms, ${TARGETS.validateRssMb} MB`, met(cold.validate.wallMs <= TARGETS.validateMs && cold.validate.maxRssMb <= TARGETS.validateRssMb)],
    [`alerts --json, ${DELIVERIES} alerts, cold`, start(cold.alertsJson), '', '', `<= ${TARGETS.alertsMs} ms`, met(cold.alertsJson.wallMs <= TARGETS.alertsMs)],
    [`poll --once, nothing changed, ${COLD_EVENTS} events, cold`, start(cold.pollOnce), `${cold.pollOnce.floorMs} ms`, `${cold.pollOnce.ratio}x`, `<= ${TARGETS.pollOnceRatio}x`, met(cold.pollOnce.ratio <= TARGETS.pollOnceRatio)],
    ['baseline poll', `${results.baseline.ms} ms`, `${results.baseline.floorMs} ms`, `${results.baseline.ratio}x`, `<= ${TARGETS.baselineRatio}x`, met(results.baseline.ratio <= TARGETS.baselineRatio)],
    ['baseline peak RSS', `${results.baseline.maxRssMb} MB`, `${results.baseline.floorMaxRssMb} MB`, '', `<= ${TARGETS.peakRssMb} MB`, met(results.baseline.maxRssMb <= TARGETS.peakRssMb)],
    [`incremental, quiet (${q.changed} changed, ${q.alerts} alerts)`, `${q.ms} ms`, `${q.floorMs} ms`, `${q.ratio}x`, `<= ${TARGETS.quietRatio}x`, met(q.ratio <= TARGETS.quietRatio)],
    [`incremental, storm (${storm.changed} changed, ${storm.alerts} alerts)`, `${storm.ms} ms`, `${storm.floorMs} ms`, `${storm.ratio}x`, `<= ${TARGETS.stormRatio}x`, met(storm.ratio <= TARGETS.stormRatio)],
    ['baseline poll on PostgreSQL', `${results.postgres.baseline.ms} ms`, `${results.baseline.floorMs} ms`, `${results.postgres.baseline.ratio}x`, `SQLite ${results.baseline.ratio}x`, ''],
    [
      `incremental, storm, on PostgreSQL (${results.postgres.incremental.alerts} alerts)`,
      `${results.postgres.incremental.ms} ms`,
      `${storm.floorMs} ms`,
      `${results.postgres.incremental.ratio}x`,
      `SQLite ${storm.ratio}x`,
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
    ...scaling.map((s) => [`events-only baseline ${s.events}`, `${s.ms} ms`, `${s.floorMs} ms`, `${s.ratio}x`, `${s.msPer1kEvents} ms/1k ev`, '']),
    ['scaling (ms per 1k events, 20k-50k vs 5k-20k)', `${round(slopeHigh, 1)} vs ${round(slopeLow, 1)}`, '', `${round(slopeGrowth)}x`, `<= ${TARGETS.slopeGrowth}x (linear)`, met(slopeGrowth <= TARGETS.slopeGrowth)],
    [`${DELIVERIES} webhook deliveries`, `${results.delivery.ms} ms`, '', `${results.delivery.perSecond}/s`, `< ${TARGETS.deliveryMs} ms`, met(results.delivery.ms < TARGETS.deliveryMs && results.delivery.receivedDistinctIds === DELIVERIES)],
  ];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const text = rows.map((r) => r.map((cell, c) => cell.padEnd(widths[c]!)).join('  ').trimEnd());
  text.splice(1, 0, widths.map((w) => '-'.repeat(w)).join('  '));
  process.stdout.write(`\n${text.join('\n')}\n\n`);

  const out = path.resolve(HERE, process.env.BENCH_OUT ?? 'results.json');
  writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`figures written to ${out}\n`);
} finally {
  await sandbox?.close();
  await postgres?.stop();
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
}
