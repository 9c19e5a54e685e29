// The daemon's schedule: each source polled on its own interval (every source once at start, in
// the cycle's order), delivery passes after each poll and on a tick, digests' cron times, and
// pruning. The tasks themselves come from the wiring; this only says when they run.
import cron, { type ScheduledTask } from 'node-cron';
import { SOURCES, type SourceName } from '../core/types.ts';
import type { Rule } from '../rules/index.ts';
import { describeError } from '../core/errors.ts';
import { inPollOrder } from './cycle.ts';
import type { Logger } from './logger.ts';
import { createScheduler } from './scheduler.ts';

export interface ScheduleOptions {
  log: Logger;
  intervals: Readonly<Record<SourceName, number>>;
  /** How often a delivery pass looks for retries and digests whose time came. */
  deliveryIntervalMs: number;
  pruneIntervalMs: number;
  poll(source: SourceName): Promise<void>;
  /**
   * One delivery pass. Passes may overlap: each takes only the channels no pass in flight is
   * sending to (`busyChannels`, shared), and starts no send once `stopping()`.
   */
  deliver(busyChannels: Set<string>, stopping: () => boolean): Promise<void>;
  prune(): Promise<void>;
}

export interface Schedule {
  /** Starts a delivery pass now (after a poll, at a digest's cron time). */
  requestDelivery(): void;
  /** Runs a task now unless one of that name is in flight (e.g. a reload after a file change). */
  runNow(name: string, task: () => Promise<void>): Promise<void>;
  /** Sets the cron tasks of the rules' digests, replacing those of the previous rules. */
  scheduleDigests(rules: readonly Rule[]): void;
  /** Stops scheduling; resolves once the polls and delivery passes in flight are done. */
  stop(): Promise<void>;
}

export function startSchedule(options: ScheduleOptions): Schedule {
  const { log } = options;
  const scheduler = createScheduler({
    onError: (name, error) => log.error({ task: name, error: describeError(error) }, `${name} failed`),
    onSkip: (name) => log.debug({ task: name }, 'still running: tick skipped'),
  });
  // A channel whose server stalls holds up only its own passes; new alerts for the other
  // channels go at once. (A delivery is claimed before it is sent: never sent twice.)
  const busyChannels = new Set<string>();
  const passes = new Set<Promise<void>>();
  const requestDelivery = (): void => {
    if (scheduler.stopped) return;
    const pass: Promise<void> = options
      .deliver(busyChannels, () => scheduler.stopped)
      .catch((error: unknown) => log.error({ task: 'deliver', error: describeError(error) }, 'deliver failed'))
      .finally(() => passes.delete(pass));
    passes.add(pass);
  };

  let digestTasks: ScheduledTask[] = [];
  const scheduleDigests = (rules: readonly Rule[]): void => {
    for (const task of digestTasks) void task.destroy();
    digestTasks = rules.flatMap((rule) => {
      if (!rule.digest?.cron) return [];
      try {
        return [cron.schedule(rule.digest.cron, requestDelivery, { timezone: rule.digest.timezone ?? 'UTC', name: `digest:${rule.name}` })];
      } catch (error) {
        // The delivery pass still closes the batch when its time has come, within seconds.
        log.warn({ rule: rule.name, error: describeError(error) }, 'digest schedule not set: sent by the delivery worker instead');
        return [];
      }
    });
  };

  // What an earlier process left due is sent at once; then every source once, then each on its
  // own interval.
  requestDelivery();
  const poll = (source: SourceName) => async () => {
    try {
      await options.poll(source);
    } finally {
      requestDelivery();
    }
  };
  void inPollOrder((source) => scheduler.runNow(`poll:${source}`, poll(source)));
  for (const source of SOURCES) scheduler.every(`poll:${source}`, options.intervals[source], poll(source));
  scheduler.every('deliver', options.deliveryIntervalMs, async () => requestDelivery());
  void scheduler.runNow('prune', options.prune);
  scheduler.every('prune', options.pruneIntervalMs, options.prune);

  return {
    requestDelivery,
    runNow: (name, task) => scheduler.runNow(name, task),
    scheduleDigests,
    async stop() {
      for (const task of digestTasks) void task.destroy();
      await scheduler.stop();
      while (passes.size > 0) await Promise.all(passes);
    },
  };
}
