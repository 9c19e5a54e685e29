// Runs tasks at fixed intervals on plain timers. A task never overlaps itself: a tick that comes
// while the previous run is still going is skipped. stop() ends the scheduling and reports when
// the runs in flight have finished.

export interface Scheduler {
  /** Runs `task` every `intervalMs`; the first run comes one interval from now. */
  every(name: string, intervalMs: number, task: () => Promise<void>): void;
  /** Runs `task` now unless a run of `name` is in flight; resolves when this run (or that one) ends. */
  runNow(name: string, task: () => Promise<void>): Promise<void>;
  /** Stops every timer; resolves when the runs in flight are done. */
  stop(): Promise<void>;
  readonly stopped: boolean;
}

export interface SchedulerOptions {
  /** Called when a task throws (tasks should report their own failures; this is the last guard). */
  onError?: (name: string, error: unknown) => void;
  /** Called when a tick is skipped because the previous run of the task is still going. */
  onSkip?: (name: string) => void;
}

export function createScheduler(options: SchedulerOptions = {}): Scheduler {
  const timers: NodeJS.Timeout[] = [];
  const inFlight = new Map<string, Promise<void>>();
  let stopped = false;

  const runNow = (name: string, task: () => Promise<void>): Promise<void> => {
    const running = inFlight.get(name);
    if (running) {
      options.onSkip?.(name);
      return running;
    }
    if (stopped) return Promise.resolve();
    const run = (async () => {
      try {
        await task();
      } catch (error) {
        options.onError?.(name, error);
      } finally {
        inFlight.delete(name);
      }
    })();
    inFlight.set(name, run);
    return run;
  };

  return {
    every(name, intervalMs, task) {
      if (stopped) return;
      timers.push(setInterval(() => void runNow(name, task), intervalMs));
    },
    runNow,
    async stop() {
      stopped = true;
      for (const timer of timers) clearInterval(timer);
      timers.length = 0;
      await Promise.all(inFlight.values());
    },
    get stopped() {
      return stopped;
    },
  };
}
