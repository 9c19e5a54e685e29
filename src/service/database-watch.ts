// The daemon's watch on its database. Checked every few seconds; once it does not answer, the
// process gives up the sources it leads (so that a process that still reaches the database takes
// them over), its polls and deliveries wait, /healthz answers 503, and the check is retried with
// backoff until the database answers again: the process stays up and resumes, no crash loop.
import { describeError } from '../core/errors.ts';
import type { DatabaseStatus } from './health.ts';
import type { Logger } from './logger.ts';

export interface DatabaseWatchOptions {
  kind: DatabaseStatus['kind'];
  /** Throws when the database does not answer. */
  check(): Promise<void>;
  /** Gives up the sources this process leads. */
  giveUp(): Promise<void>;
  log: Logger;
  /** Between checks while the database answers; the first delay of the backoff. */
  intervalMs?: number;
  maxBackoffMs?: number;
}

export interface DatabaseWatch {
  status(): DatabaseStatus;
  stop(): void;
}

/** The wait before the next check after `failures` failed ones in a row: doubling from the interval, bounded. */
export function nextCheckDelay(failures: number, intervalMs: number, maxMs: number): number {
  return failures === 0 ? intervalMs : Math.min(maxMs, intervalMs * 2 ** (failures - 1));
}

export function watchDatabase(options: DatabaseWatchOptions): DatabaseWatch {
  const { log, intervalMs = 2_000, maxBackoffMs = 30_000 } = options;
  const status: DatabaseStatus = { kind: options.kind, ok: true, error: null };
  let failures = 0;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  const checkNow = async (): Promise<void> => {
    try {
      await options.check();
      if (!status.ok) log.info(`the database answers again after ${failures} failed check(s): polls and deliveries resume`);
      failures = 0;
      status.ok = true;
      status.error = null;
    } catch (error) {
      failures++;
      status.error = describeError(error);
      if (status.ok) {
        status.ok = false;
        log.error({ error: status.error }, 'database unreachable: sources given up to the other processes, polls and deliveries wait; checking again with backoff');
        await options.giveUp().catch(() => undefined);
      } else {
        log.warn({ error: status.error, failures, next_check_s: nextCheckDelay(failures, intervalMs, maxBackoffMs) / 1000 }, 'database still unreachable');
      }
    }
    if (!stopped) timer = setTimeout(() => void checkNow(), nextCheckDelay(failures, intervalMs, maxBackoffMs));
  };
  timer = setTimeout(() => void checkNow(), intervalMs);

  return {
    status: () => ({ ...status }),
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
