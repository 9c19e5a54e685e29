// `edgewatch run`: polls each source on its own schedule, delivers what is due, reloads the rules
// when their files change, serves /healthz, /metrics and the status page, and stops gracefully.
import { watch, type FSWatcher } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import cron, { type ScheduledTask } from 'node-cron';
import type { Config } from '../config.ts';
import { EdgewatchError } from '../core/errors.ts';
import { SOURCES, type SourceName } from '../core/types.ts';
import type { SendToChannel } from '../notify/index.ts';
import { formatProblem, type RuleSet } from '../rules/index.ts';
import { lastFiredByRule, listAlerts, listSourceStates, openDigestBatches, outboxDepth, pruneSnapshots, setMeta, type Store } from '../store/index.ts';
import { connectApi, loadRulesAndTemplates, openConfiguredStore, SANDBOX_URL_KEY, type ApiConnection, type LoadedRules } from './app.ts';
import { describeError, pollSources } from './cycle.ts';
import { assessHealth, isKeyRefused, type RulesStatus, type SourceStatus } from './health.ts';
import { startHttpServer, type HttpServer } from './http.ts';
import { createLogger, type Logger } from './logger.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import { deliverNow } from './deliver.ts';
import { createChannelSender } from './senders.ts';
import { createScheduler, type Scheduler } from './scheduler.ts';
import { renderStatusPage } from './status-page.ts';

export const DEFAULT_POLL_INTERVALS: Readonly<Record<SourceName, number>> = { events: 300_000, kpis: 300_000, reports: 3_600_000, runs: 30_000 };
/** The built-in sandbox's clock runs fast, so it is polled every few seconds. */
export const SANDBOX_POLL_INTERVALS: Readonly<Record<SourceName, number>> = { events: 5_000, kpis: 5_000, reports: 10_000, runs: 5_000 };

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
  scheduler: Scheduler;
  unwatch: () => void;
  /** Sends what is due now: digests at their cron time, and after each poll. */
  requestDelivery: () => void;
  /** Resolves once no delivery pass is in flight. */
  deliveriesInFlight: () => Promise<void>;
}

export function createDaemon(options: DaemonOptions): Daemon {
  const { config } = options;
  const log = options.logger ?? createLogger(config.logLevel);
  const out = options.out ?? ((line: string) => void process.stdout.write(`${line}\n`));
  const deliveryIntervalMs = options.deliveryIntervalMs ?? 2_000;
  const stopTimeoutMs = options.stopTimeoutMs ?? 7_000;
  const reloadDebounceMs = options.reloadDebounceMs ?? 300;

  let ruleSet: RuleSet;
  /** Built with each (re)loaded rule set, so a delivery pass reuses the channels' clients. */
  let send: SendToChannel;
  let rulesStatus: RulesStatus;
  let running: Running | undefined;
  let stopping: Promise<void> | undefined;
  let metrics: Metrics;
  const startedAt = Date.now();
  const sources = new Map<SourceName, SourceStatus>();
  let digestTasks: ScheduledTask[] = [];

  /** A digest with `cron` goes at its time, in its time zone; the delivery worker closes its batch. */
  function scheduleDigests(requestDelivery: () => void): void {
    for (const task of digestTasks) void task.destroy();
    digestTasks = ruleSet.rules.flatMap((rule) => {
      if (!rule.digest?.cron) return [];
      try {
        return [cron.schedule(rule.digest.cron, requestDelivery, { timezone: rule.digest.timezone ?? 'UTC', name: `digest:${rule.name}` })];
      } catch (error) {
        // The delivery worker still closes the batch when its time has come, within seconds.
        log.warn({ rule: rule.name, error: describeError(error) }, 'digest schedule not set: sent by the delivery worker instead');
        return [];
      }
    });
  }

  // --- rules -------------------------------------------------------------------------------

  async function loadRuleFiles(): Promise<{ loaded?: LoadedRules; problems: string[] }> {
    try {
      const loaded = await loadRulesAndTemplates(config);
      if (!loaded.ok) return { problems: loaded.problems.map(formatProblem) };
      return { loaded, problems: loaded.ruleSet.problems.map(formatProblem) };
    } catch (error) {
      // The templates folder cannot be read (removed, no permission).
      return { problems: [describeError(error)] };
    }
  }

  async function reload(): Promise<void> {
    const { loaded, problems } = await loadRuleFiles();
    const at = new Date().toISOString();
    metrics.reload(problems.length === 0);
    if (!loaded || problems.length > 0) {
      for (const problem of problems) log.error(problem);
      log.error({ reload: 'failed', problems: problems.length }, `rules reload failed with ${problems.length} problem(s): the last good rules keep running`);
      rulesStatus = { ...rulesStatus, lastReload: { at, ok: false, problems } };
      return;
    }
    ruleSet = loaded.ruleSet;
    send = createChannelSender({ config, templates: loaded.templates, rules: ruleSet.rules, out });
    if (running) scheduleDigests(running.requestDelivery);
    rulesStatus = { failedAtStart: false, problems: [], loadedAt: at, rules: ruleSet.rules.length, channels: ruleSet.channels.size, lastReload: { at, ok: true, problems: [] } };
    log.info({ reload: 'ok', rules: ruleSet.rules.length, channels: ruleSet.channels.size }, `rules reloaded: ${ruleSet.rules.length} rules, ${ruleSet.channels.size} channels`);
  }

  /** fs.watch reports a save as several events; one reload follows the last of them. */
  function watchFolders(scheduler: Scheduler): () => void {
    let timer: NodeJS.Timeout | undefined;
    const changed = (): void => {
      clearTimeout(timer);
      timer = setTimeout(() => void scheduler.runNow('reload', reload), reloadDebounceMs);
    };
    const watchers: FSWatcher[] = [];
    for (const [dir, recursive] of [[config.rulesDir, false], [config.templatesDir, true]] as const) {
      try {
        const watcher = watch(dir, { recursive }, changed);
        watcher.on('error', (error) => log.warn({ dir, error: describeError(error) }, 'stopped watching a folder'));
        watchers.push(watcher);
      } catch (error) {
        log.warn({ dir, error: describeError(error) }, 'cannot watch the folder: its changes need a restart');
      }
    }
    return () => {
      for (const watcher of watchers) watcher.close();
      clearTimeout(timer);
    };
  }

  // --- polling and delivery ----------------------------------------------------------------

  async function poll(store: Store, connection: ApiConnection, source: SourceName, requestDelivery: () => void): Promise<void> {
    const report = await pollSources({
      store,
      api: connection.api,
      rules: ruleSet.rules,
      now: () => new Date(),
      reportsBudget: config.reportsBudget,
      sources: [source],
      onPoll: (event) => {
        const status = sources.get(source)!;
        const at = new Date();
        metrics.pollDone(source, event.ok, event.durationMs);
        if (event.ok) {
          status.lastOkAt = at.getTime();
          status.lastErrorStatus = undefined;
          status.idle = event.result?.skipped === true;
          if (!status.idle) status.lastSuccessAt = at.toISOString();
          log.debug({ source, ms: event.durationMs, changed: event.result?.changed, alerts: event.result?.alerts.length, idle: status.idle }, 'polled');
        } else {
          status.lastErrorAt = at.toISOString();
          status.lastError = event.error ?? 'unknown error';
          status.lastErrorStatus = event.status;
          // A refused key fails every poll until it is changed: an error, saying what to fix.
          if (isKeyRefused(event.status)) log.error({ source, status: event.status, error: event.error }, `poll of ${source} failed: the API refused the key (HTTP ${event.status}): check EDGEWATCH_API_KEY`);
          else log.warn({ source, ms: event.durationMs, error: event.error }, `poll of ${source} failed`);
        }
      },
    });
    for (const alert of report.alerts) metrics.alertFired(alert.rule);
    if (report.alerts.length > 0) {
      // Digested alerts are printed only when their batch goes: the count says so.
      const digestRules = new Set(ruleSet.rules.filter((rule) => rule.digest).map((rule) => rule.name));
      const waiting = report.alerts.filter((alert) => digestRules.has(alert.rule)).length;
      log.info(
        { source, alerts: report.alerts.length, waiting_for_digest: waiting, rules: [...new Set(report.alerts.map((a) => a.rule))] },
        `${report.alerts.length} alert(s) fired${waiting > 0 ? ` (${waiting} waiting for a digest)` : ''}`,
      );
    }
    requestDelivery();
    // After every poll, so that the next start never continues the world behind what is stored.
    await connection.saveSandboxWorld();
  }

  function deliveryWorker(store: Store, busyChannels: Set<string>, stopping: () => boolean): () => Promise<void> {
    return async () => {
      const report = await deliverNow(store, config, ruleSet, send, {
        busyChannels,
        stopping,
        onOutcome: (event) => {
          const outcome = event.outcome.ok ? 'delivered' : event.dead ? 'dead' : 'retrying';
          metrics.delivery(event.channel, outcome, event.count, event.durationMs);
          if (!event.outcome.ok) log.warn({ channel: event.channel, kind: event.kind, count: event.count, outcome, error: event.outcome.error }, `delivery to ${event.channel} ${outcome === 'dead' ? 'is dead' : 'will be retried'}`);
          else log.debug({ channel: event.channel, kind: event.kind, count: event.count, ms: event.durationMs }, 'delivered');
        },
      });
      if (report.delivered + report.retrying + report.dead > 0) log.info({ ...report }, 'deliveries attempted');
    };
  }

  // --- HTTP --------------------------------------------------------------------------------

  function health() {
    return assessHealth({ sources: [...sources.values()], rules: rulesStatus, startedAt, now: Date.now() });
  }

  async function statusPage(store: Store, connection: ApiConnection): Promise<string> {
    const lastFired = await lastFiredByRule(store);
    return renderStatusPage({
      now: new Date().toISOString(),
      api: connection.sandbox ? `built-in sandbox at ${connection.sandbox.url}` : withoutCredentials(config.apiUrl ?? ''),
      health: health().report,
      rules: ruleSet.rules.map((rule) => ({ name: rule.name, source: rule.source, trigger: rule.trigger.type, notify: rule.notify, lastFiredAt: lastFired.get(rule.name) ?? null })),
      alerts: await listAlerts(store, 30),
    });
  }

  // --- start and stop ----------------------------------------------------------------------

  async function start(): Promise<{ url: string }> {
    const first = await loadRuleFiles();
    if (!first.loaded) throw new EdgewatchError('CONFIG_INVALID', `cannot start: invalid templates:\n  ${first.problems.join('\n  ')}`);
    ruleSet = first.loaded.ruleSet;
    send = createChannelSender({ config, templates: first.loaded.templates, rules: ruleSet.rules, out });
    const loadedAt = new Date().toISOString();
    rulesStatus = { failedAtStart: first.problems.length > 0, problems: first.problems, loadedAt, rules: ruleSet.rules.length, channels: ruleSet.channels.size, lastReload: undefined };

    const store = await openConfiguredStore(config);
    metrics = createMetrics({
      outboxDepth: () => outboxDepth(store),
      digestBatchesPending: async () => (await openDigestBatches(store)).length,
    });
    const connection = await connectApi(config, { onRequest: (info) => metrics.apiRequest(info), sandboxWorldIn: store });
    // So that `edgewatch generate` reaches this sandbox, whose runs this daemon watches.
    await setMeta(store, SANDBOX_URL_KEY, connection.sandbox?.url);
    const intervals = { ...(connection.sandbox ? SANDBOX_POLL_INTERVALS : DEFAULT_POLL_INTERVALS) };
    for (const source of SOURCES) intervals[source] = config.pollIntervals[source] ?? intervals[source];

    const stored = new Map((await listSourceStates(store)).map((row) => [row.source, row]));
    for (const source of SOURCES) {
      const row = stored.get(source);
      sources.set(source, { source, intervalMs: intervals[source], lastSuccessAt: row?.last_success_at ?? null, lastErrorAt: row?.last_error_at ?? null, lastError: row?.last_error ?? null, lastOkAt: undefined, lastErrorStatus: undefined, idle: false });
    }

    let http: HttpServer;
    try {
      http = await startHttpServer({
        port: config.port,
        host: config.host,
        handlers: {
          health: () => {
            const { httpStatus, report } = health();
            return { httpStatus, body: report };
          },
          metrics: async () => ({ contentType: metrics.contentType, text: await metrics.render() }),
          statusPage: () => statusPage(store, connection),
        },
        onError: (error) => log.error({ error: describeError(error) }, 'HTTP handler failed'),
      });
    } catch (error) {
      await connection.close();
      await store.close();
      throw new EdgewatchError(
        'CONFIG_INVALID',
        `cannot serve HTTP on ${config.host} port ${config.port} (${describeError(error)}): set EDGEWATCH_PORT to a free port (0: any), and EDGEWATCH_HOST to an address of this machine`,
        { cause: error },
      );
    }

    // The first lines a newcomer reads: where this runs, where to look, how to go live.
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
    log.info({ intervals_s: Object.fromEntries(SOURCES.map((s) => [s, intervals[s] / 1000])), rules: ruleSet.rules.length, channels: ruleSet.channels.size, rules_dir: config.rulesDir, db: config.dbPath }, 'started');
    if (rulesStatus.failedAtStart) {
      for (const problem of first.problems) log.error(problem);
      log.error({ problems: first.problems.length }, `rules have ${first.problems.length} problem(s): running with the valid rules only (/healthz answers 503 until the files are fixed)`);
    }

    const scheduler = createScheduler({
      onError: (name, error) => log.error({ task: name, error: describeError(error) }, `${name} failed`),
      onSkip: (name) => log.debug({ task: name }, 'still running: tick skipped'),
    });
    // Delivery passes may overlap: each takes only the channels that no pass still in flight is
    // sending to, so a channel whose server stalls holds up only itself, and new alerts for the
    // other channels go at once. (A delivery is claimed before it is sent: never sent twice.)
    const busyChannels = new Set<string>();
    const passes = new Set<Promise<void>>();
    const deliverOnce = deliveryWorker(store, busyChannels, () => scheduler.stopped);
    const requestDelivery = (): void => {
      if (scheduler.stopped) return;
      const pass: Promise<void> = deliverOnce()
        .catch((error: unknown) => log.error({ task: 'deliver', error: describeError(error) }, 'deliver failed'))
        .finally(() => passes.delete(pass));
      passes.add(pass);
    };
    const deliveriesInFlight = async (): Promise<void> => {
      while (passes.size > 0) await Promise.all(passes);
    };
    const pollTask = (source: SourceName) => () => poll(store, connection, source, requestDelivery);

    running = { store, connection, http, scheduler, unwatch: watchFolders(scheduler), requestDelivery, deliveriesInFlight };
    scheduleDigests(requestDelivery);

    // What an earlier process left due is sent at once; then every source once (reports follow
    // the events they are chosen from), then each on its own interval.
    requestDelivery();
    void scheduler.runNow('poll:events', pollTask('events')).then(() => scheduler.runNow('poll:reports', pollTask('reports')));
    void scheduler.runNow('poll:kpis', pollTask('kpis'));
    void scheduler.runNow('poll:runs', pollTask('runs'));
    for (const source of SOURCES) scheduler.every(`poll:${source}`, intervals[source], pollTask(source));
    scheduler.every('deliver', deliveryIntervalMs, async () => requestDelivery());
    const prune = async (): Promise<void> => {
      const removed = await pruneSnapshots(store, new Date(Date.now() - config.snapshotRetentionMs));
      if (removed > 0) log.info({ removed }, 'old snapshots pruned');
    };
    void scheduler.runNow('prune', prune);
    scheduler.every('prune', 3_600_000, prune);
    return { url: http.url };
  }

  async function stop(): Promise<void> {
    const current = running;
    if (!current) return;
    stopping ??= (async () => {
      log.info({ timeout_s: stopTimeoutMs / 1000 }, 'stopping: no new polls; waiting for polls and deliveries in flight');
      current.unwatch();
      for (const task of digestTasks) void task.destroy();
      const drained = await Promise.race([
        current.scheduler.stop().then(() => current.deliveriesInFlight()).then(() => true),
        sleep(stopTimeoutMs, false),
      ]);
      // An abandoned delivery has its attempt counted and stays pending: the next start sends it
      // again with the same id, so nothing is lost.
      if (!drained) log.warn('work still in flight after the stop timeout: abandoned; pending deliveries are sent at the next start');
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
