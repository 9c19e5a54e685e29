// `edgewatch run`: the wiring of the daemon. The rules runtime (rules-runtime.ts) holds the rules
// and reloads them when their files change; the schedule (schedule.ts) polls each source on its
// interval and delivers; this file connects them to the store, the API, the HTTP server, the
// metrics and the log, and stops everything gracefully.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Config } from '../config.ts';
import { EdgewatchError } from '../core/errors.ts';
import { isMarketSource, SOURCES, type MarketSourceName, type SourceName } from '../core/types.ts';
import {
  activeSilences,
  checkDatabase,
  describeStore,
  giveUpLeadership,
  ledSources,
  listSourceStates,
  openDigestBatches,
  outboxDepth,
  pruneSnapshots,
  setMeta,
  type Store,
} from '../store/index.ts';
import { connectApi, dataClock, openConfiguredStore, SANDBOX_URL_KEY, type ApiConnection } from './app.ts';
import { describeError } from '../core/errors.ts';
import { pollSources, type PollSourcesOptions } from './cycle.ts';
import { watchDatabase, type DatabaseWatch } from './database-watch.ts';
import { deliverNow } from './deliver.ts';
import { createExplainer } from './explain.ts';
import { assessHealth, isKeyRefused, type HealthReport, type SourceStatus } from './health.ts';
import { startHttpServer, type HttpServer } from './http.ts';
import { createLogger, type Logger } from './logger.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import { startRulesRuntime, type RulesRuntime } from './rules-runtime.ts';
import { startSchedule, type Schedule } from './schedule.ts';
import { createStatusApi, type StatusApi } from './status-api.ts';
import { readAsset, STATUS_PAGE_HTML } from './status-page.ts';

/** The market-search data refreshes nightly: hourly polls see a refresh within the hour. */
const MARKETS_INTERVAL = 3_600_000;
export const DEFAULT_POLL_INTERVALS: Readonly<Record<SourceName, number>> = {
  events: 300_000,
  kpis: 300_000,
  reports: 3_600_000,
  runs: 30_000,
  ...marketIntervals(MARKETS_INTERVAL),
};
/** The built-in sandbox's clock runs fast (its market data refreshes every 15 s), so it is polled every few seconds. */
export const SANDBOX_POLL_INTERVALS: Readonly<Record<SourceName, number>> = { events: 5_000, kpis: 5_000, reports: 10_000, runs: 5_000, ...marketIntervals(5_000) };

/** One interval for every market-search source (EDGEWATCH_POLL_MARKETS). */
function marketIntervals(ms: number): Record<MarketSourceName, number> {
  return { edge: ms, rankings: ms, markets: ms, similar: ms, baskets: ms };
}

/** The interval the environment sets for a source, if it does. */
function configuredInterval(config: Config, source: SourceName): number | undefined {
  return isMarketSource(source) ? config.pollIntervals.markets : config.pollIntervals[source];
}
const PRUNE_INTERVAL_MS = 3_600_000;

/** A URL as it may be shown: user and password taken out. */
function withoutCredentials(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.toString().replace(/\/$/, '');
  } catch {
    return '(invalid URL)';
  }
}

export interface DaemonOptions {
  config: Config;
  logger?: Logger;
  /** Where console channels print; standard output by default. */
  out?: (line: string) => void;
  /** How often the delivery worker looks for retries and digests whose time came. */
  deliveryIntervalMs?: number;
  /** How long a stop waits for polls and deliveries in flight before abandoning them. */
  stopTimeoutMs?: number;
  reloadDebounceMs?: number;
  /** The daemon's clock: polls, deliveries, health and the status page read it. */
  now?: () => Date;
  /** How often the database is checked while it answers (then with backoff until it does again). */
  databaseCheckMs?: number;
}

export interface Daemon {
  /** Resolves once the HTTP server listens and the first polls are under way. */
  start(): Promise<{ url: string }>;
  /** Stops scheduling, waits (bounded) for work in flight, closes everything. */
  stop(): Promise<void>;
}

interface Running {
  store: Store;
  connection: ApiConnection;
  http: HttpServer;
  schedule: Schedule;
  database: DatabaseWatch;
  unwatch: () => void;
}

/** A poll's outcome in the source's status, which /healthz judges. */
function recordPoll(status: SourceStatus, event: Parameters<NonNullable<PollSourcesOptions['onPoll']>>[0], at: Date): void {
  if (event.result?.ledElsewhere) {
    // Another process polls it: what this process saw of it before is no longer its to judge.
    status.lastErrorStatus = undefined;
    status.idle = false;
  } else if (event.ok) {
    status.lastOkAt = at.getTime();
    status.lastErrorStatus = undefined;
    status.idle = event.result?.skipped === true;
    if (!status.idle) status.lastSuccessAt = at.toISOString();
  } else {
    status.lastErrorAt = at.toISOString();
    status.lastError = event.error ?? 'unknown error';
    status.lastErrorStatus = event.status;
  }
}

/** What the daemon's parts are wired with, once started. */
interface Wiring {
  config: Config;
  log: Logger;
  now: () => Date;
  store: Store;
  connection: ApiConnection;
  rules: RulesRuntime;
  metrics: Metrics;
  database: DatabaseWatch;
}

/** Each source's status for /healthz, starting from what the store remembers of its polls. */
async function sourceStatuses(store: Store, intervals: Record<SourceName, number>): Promise<Map<SourceName, SourceStatus>> {
  const stored = new Map((await listSourceStates(store)).map((row) => [row.source, row]));
  return new Map(
    SOURCES.map((source) => {
      const row = stored.get(source);
      const status: SourceStatus = {
        source,
        intervalMs: intervals[source],
        lastSuccessAt: row?.last_success_at ?? null,
        lastErrorAt: row?.last_error_at ?? null,
        lastError: row?.last_error ?? null,
        lastOkAt: undefined,
        lastErrorStatus: undefined,
        idle: false,
      };
      return [source, status];
    }),
  );
}

/** /healthz, /metrics and the status page; a port or address that cannot be bound says what to set. */
async function serveHttp(wiring: Wiring, health: () => ReturnType<typeof assessHealth>): Promise<HttpServer> {
  const { config, log, metrics } = wiring;
  try {
    return await startHttpServer({
      port: config.port,
      host: config.host,
      handlers: {
        health: () => {
          const { httpStatus, report } = health();
          return { httpStatus, body: report };
        },
        metrics: async () => ({ contentType: metrics.contentType, text: await metrics.render() }),
        statusPage: async () => STATUS_PAGE_HTML,
        api: statusApi(wiring, () => health().report),
        asset: readAsset,
      },
      onError: (error) => log.error({ error: describeError(error) }, 'HTTP handler failed'),
    });
  } catch (error) {
    throw new EdgewatchError(
      'CONFIG_INVALID',
      `cannot serve HTTP on ${config.host} port ${config.port} (${describeError(error)}): set EDGEWATCH_PORT to a free port (0: any), and EDGEWATCH_HOST to an address of this machine`,
      { cause: error },
    );
  }
}

/** The first lines a newcomer reads: where this runs, where to look, how to go live. */
function logStart(wiring: Wiring, http: HttpServer, intervals: Record<SourceName, number>): void {
  const { config, log, connection, rules } = wiring;
  if (connection.sandbox) {
    log.info({ sandbox: connection.sandbox.url }, `no EDGEWATCH_API_URL set: running on the built-in sandbox, a simulated research API at ${connection.sandbox.url}`);
    if (connection.resumedAt) log.info({ sandbox_time: connection.resumedAt.toISOString() }, `the sandbox's world continues where it stopped (simulated time ${connection.resumedAt.toISOString()})`);
  } else {
    const api = withoutCredentials(config.apiUrl ?? '');
    log.info({ api }, `polling the research API at ${api}`);
    if (config.apiKey === undefined) log.warn('EDGEWATCH_API_KEY is not set: the research API will refuse every request (401); set it in the environment or in .env');
  }
  log.info({ url: http.url }, `status page: ${http.url} (health: ${http.url}healthz, metrics: ${http.url}metrics)`);
  if (connection.sandbox) log.info('to use the real research API, set EDGEWATCH_API_URL (its root, including /v1) and EDGEWATCH_API_KEY, in the environment or in .env');
  log.info({ url: http.url, port: http.port }, `listening on ${http.url}`);
  for (const warning of config.warnings) log.warn(warning);
  const { ruleSet, status } = rules;
  // The database's label, never EDGEWATCH_DB itself: a PostgreSQL URL holds a password.
  const database = describeStore(wiring.store);
  log.info(
    { intervals_s: Object.fromEntries(SOURCES.map((s) => [s, intervals[s] / 1000])), rules: ruleSet.rules.length, channels: ruleSet.channels.size, rules_dir: config.rulesDir, db: database.label, database: database.kind },
    'started',
  );
  if (status.failedAtStart) {
    for (const problem of status.problems) log.error(problem);
    log.error({ problems: status.problems.length }, `rules have ${status.problems.length} problem(s): running with the valid rules only (/healthz answers 503 until the files are fixed)`);
  }
}


/** One source's poll, recorded in its status, the metrics and the log. */
async function poll({ config, log, now, store, connection, rules, metrics, database }: Wiring, status: SourceStatus): Promise<void> {
  const { source } = status;
  // The database is away: the watch retries it; polling now would only fail.
  if (!database.status().ok) return;
  const { ruleSet } = rules;
  const report = await pollSources({
    store,
    api: connection.api,
    rules: ruleSet.rules,
    now: dataClock(connection, now),
    wallNow: now,
    reportsBudget: config.reportsBudget,
    sources: [source],
    ...(ruleSet.health ? { health: ruleSet.health } : {}),
    onPoll: (event) => {
      recordPoll(status, event, now());
      if (event.result?.ledElsewhere) return log.debug({ source }, 'polled by another process, which leads it');
      metrics.pollDone(source, event.ok, event.durationMs);
      for (const notice of event.result?.notices ?? []) log.warn({ source }, notice);
      if (event.ok) log.debug({ source, ms: event.durationMs, changed: event.result?.changed, alerts: event.result?.alerts.length, idle: status.idle }, 'polled');
      // A refused key fails every poll until it is changed: an error, saying what to fix.
      else if (isKeyRefused(event.status)) log.error({ source, status: event.status, error: event.error }, `poll of ${source} failed: the API refused the key (HTTP ${event.status}): check EDGEWATCH_API_KEY`);
      else log.warn({ source, ms: event.durationMs, error: event.error }, `poll of ${source} failed`);
    },
  });
  for (const alert of report.alerts) metrics.alertFired(alert.rule);
  if (report.alerts.length === 0) return;
  // Digested alerts are printed only when their batch goes: the count says so.
  const digestRules = new Set(ruleSet.rules.filter((rule) => rule.digest).map((rule) => rule.name));
  const waiting = report.alerts.filter((alert) => digestRules.has(alert.rule)).length;
  log.info(
    { source, alerts: report.alerts.length, waiting_for_digest: waiting, rules: [...new Set(report.alerts.map((a) => a.rule))] },
    `${report.alerts.length} alert(s) fired${waiting > 0 ? ` (${waiting} waiting for a digest)` : ''}`,
  );
}


/** One delivery pass with the running rules, recorded in the metrics and the log. */
async function deliver({ config, log, now, store, rules, metrics, connection, database }: Wiring, busyChannels: Set<string>, stopped: () => boolean): Promise<void> {
  if (!database.status().ok) return;
  const explain = createExplainer({ api: connection.api, store, rules: rules.ruleSet.rules, templates: rules.templates, dailyLimit: config.agentDailyLimit, now, log });
  const report = await deliverNow(store, config, rules.ruleSet, rules.send, {
    now,
    explain,
    busyChannels,
    stopping: stopped,
    onOutcome: (event) => {
      const outcome = event.outcome.ok ? 'delivered' : event.dead ? 'dead' : 'retrying';
      metrics.delivery(event.channel, outcome, event.count, event.durationMs);
      if (!event.outcome.ok) log.warn({ channel: event.channel, kind: event.kind, count: event.count, outcome, error: event.outcome.error }, `delivery to ${event.channel} ${outcome === 'dead' ? 'is dead' : 'will be retried'}`);
      else log.debug({ channel: event.channel, kind: event.kind, count: event.count, ms: event.durationMs }, 'delivered');
    },
  });
  if (report.delivered + report.retrying + report.dead > 0) log.info({ ...report }, 'deliveries attempted');
}


/** The status page's JSON API, read from the store, the running rules and the sources' health. */
function statusApi({ config, now, store, connection, rules }: Wiring, health: () => HealthReport): StatusApi {
  return createStatusApi({
    store,
    now,
    health,
    rules: () => ({ rules: rules.ruleSet.rules, loadedAt: rules.status.loadedAt, problems: rules.status.problems, lastReload: rules.status.lastReload }),
    apiDescription: connection.sandbox ? `built-in sandbox at ${connection.sandbox.url}` : withoutCredentials(config.apiUrl ?? ''),
    activeSilences: async () =>
      (await activeSilences(store, now())).map(({ id, matchers, starts_at, ends_at, comment, created_by }) => ({ id, matchers: { ...matchers }, starts_at, ends_at, comment, created_by })),
  });
}


export function createDaemon(options: DaemonOptions): Daemon {
  const { config } = options;
  const log = options.logger ?? createLogger(config.logLevel);
  const out = options.out ?? ((line: string) => void process.stdout.write(`${line}\n`));
  const now = options.now ?? (() => new Date());
  const stopTimeoutMs = options.stopTimeoutMs ?? 7_000;
  let running: Running | undefined;
  let stopping: Promise<void> | undefined;

  async function start(): Promise<{ url: string }> {
    const startedAt = now().getTime();
    const rules = await startRulesRuntime({ config, log, out, now });
    const store = await openConfiguredStore(config);
    const { kind } = describeStore(store);
    const database = watchDatabase({
      kind,
      check: () => checkDatabase(store),
      giveUp: () => giveUpLeadership(store),
      log,
      ...(options.databaseCheckMs === undefined ? {} : { intervalMs: options.databaseCheckMs }),
    });
    const metrics = createMetrics({
      outboxDepth: () => outboxDepth(store),
      digestBatchesPending: async () => (await openDigestBatches(store)).length,
      roles: () => new Map(SOURCES.map((source) => [source, ledSources(store).has(source) ? 'leader' : 'standby'])),
      database: () => database.status(),
    });
    rules.onReload((ok) => metrics.reload(ok));
    const connection = await connectApi(config, { onRequest: (info) => metrics.apiRequest(info), sandboxWorldIn: store });
    // So that `edgewatch generate` reaches this sandbox, whose runs this daemon watches.
    await setMeta(store, SANDBOX_URL_KEY, connection.sandbox?.url);
    const wiring: Wiring = { config, log, now, store, connection, rules, metrics, database };
    const intervals = { ...(connection.sandbox ? SANDBOX_POLL_INTERVALS : DEFAULT_POLL_INTERVALS) };
    for (const source of SOURCES) intervals[source] = configuredInterval(config, source) ?? intervals[source];

    const sources = await sourceStatuses(store, intervals);
    const health = () =>
      assessHealth({
        sources: [...sources.values()],
        rules: rules.status,
        database: database.status(),
        leads: new Map([...ledSources(store)].map(([source, since]) => [source, since.getTime()])),
        startedAt,
        now: now().getTime(),
      });
    let http: HttpServer;
    try {
      http = await serveHttp(wiring, health);
    } catch (error) {
      database.stop();
      await connection.close();
      await store.close();
      throw error;
    }
    logStart(wiring, http, intervals);

    const schedule = startSchedule({
      log,
      intervals,
      deliveryIntervalMs: options.deliveryIntervalMs ?? 2_000,
      pruneIntervalMs: PRUNE_INTERVAL_MS,
      poll: async (source) => {
        await poll(wiring, sources.get(source)!);
        // After every poll, so that the next start never continues the world behind what is stored.
        await connection.saveSandboxWorld();
      },
      deliver: (busyChannels, stopped) => deliver(wiring, busyChannels, stopped),
      prune: async () => {
        const removed = await pruneSnapshots(store, new Date(now().getTime() - config.snapshotRetentionMs));
        if (removed > 0) log.info({ removed }, 'old snapshots pruned');
      },
    });
    schedule.scheduleDigests(rules.ruleSet.rules);
    rules.onReload((ok) => {
      if (ok) schedule.scheduleDigests(rules.ruleSet.rules);
    });
    const unwatch = rules.watch(() => void schedule.runNow('reload', rules.reload), options.reloadDebounceMs ?? 300);
    running = { store, connection, http, schedule, database, unwatch };
    return { url: http.url };
  }

  async function stop(): Promise<void> {
    const current = running;
    if (!current) return;
    stopping ??= (async () => {
      log.info({ timeout_s: stopTimeoutMs / 1000 }, 'stopping: no new polls; waiting for polls and deliveries in flight');
      current.unwatch();
      const drained = await Promise.race([current.schedule.stop().then(() => true), sleep(stopTimeoutMs, false)]);
      // An abandoned delivery has its attempt counted and stays pending: the next start sends it
      // again with the same id, so nothing is lost.
      if (!drained) log.warn('work still in flight after the stop timeout: abandoned; pending deliveries are sent at the next start');
      current.database.stop();
      await current.http.close();
      await current.connection.saveSandboxWorld().catch(() => undefined);
      // The API client waits for its requests; an abandoned one must not hold the stop.
      await Promise.race([current.connection.close(), sleep(1_000)]);
      if (current.connection.sandbox) await setMeta(current.store, SANDBOX_URL_KEY, undefined).catch(() => undefined);
      await current.store.close();
      log.info('stopped');
    })();
    return stopping;
  }

  return { start, stop };
}
