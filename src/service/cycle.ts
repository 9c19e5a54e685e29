// One poll cycle: every source polled once (a failing source does not stop the others), then the
// deliveries that are due. The daemon and `poll --once` both call this.
import type { Alert, SourceName } from '../core/types.ts';
import type { Rule } from '../rules/index.ts';
import { errorStatus, pollEvents, pollKpis, pollReports, pollRuns, type PollContext, type PollResult, type ResearchApi } from '../sources/index.ts';
import { markPollError, pruneSnapshots, type Store } from '../store/index.ts';

export interface PollSourcesOptions {
  store: Store;
  api: ResearchApi;
  rules: readonly Rule[];
  now: () => Date;
  dryRun?: boolean;
  reportsBudget: number;
  /** Which sources to poll; default all. */
  sources?: readonly SourceName[];
  snapshotRetentionMs?: number;
  /** `status`: the HTTP status of the API's answer that failed the poll, when there was one. */
  onPoll?: (event: { source: SourceName; ok: boolean; durationMs: number; error?: string; status?: number; result?: PollResult }) => void;
}

export interface SourceFailure {
  source: SourceName;
  error: string;
}

export interface PollSourcesReport {
  results: PollResult[];
  failures: SourceFailure[];
  alerts: Alert[];
}

const POLLERS: Record<SourceName, (ctx: PollContext) => Promise<PollResult>> = {
  events: pollEvents,
  kpis: pollKpis,
  reports: pollReports,
  runs: pollRuns,
};

export function describeError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' && !error.message.includes(code) ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}

export async function pollSources(options: PollSourcesOptions): Promise<PollSourcesReport> {
  const wanted = new Set(options.sources ?? (Object.keys(POLLERS) as SourceName[]));
  const report: PollSourcesReport = { results: [], failures: [], alerts: [] };

  const pollOne = async (source: SourceName): Promise<void> => {
    if (!wanted.has(source)) return;
    const started = Date.now();
    try {
      const result = await POLLERS[source]({
        store: options.store,
        api: options.api,
        rules: options.rules.filter((rule) => rule.source === source),
        now: options.now,
        dryRun: options.dryRun ?? false,
        reportsBudget: options.reportsBudget,
      });
      report.results.push(result);
      report.alerts.push(...result.alerts);
      options.onPoll?.({ source, ok: true, durationMs: Date.now() - started, result });
    } catch (error) {
      let message = describeError(error);
      if (!options.dryRun) {
        try {
          await markPollError(options.store, source, options.now(), message);
        } catch (recordError) {
          // The database itself is failing (locked, disk full): the failure is still reported.
          message += ` (not recorded: ${describeError(recordError)})`;
        }
      }
      report.failures.push({ source, error: message });
      const status = errorStatus(error);
      options.onPoll?.({ source, ok: false, durationMs: Date.now() - started, error: message, ...(status === undefined ? {} : { status }) });
    }
  };

  // Reports are chosen from the events' latest snapshots, so they follow the events poll.
  await Promise.all([
    pollOne('events').then(() => pollOne('reports')),
    pollOne('kpis'),
    pollOne('runs'),
  ]);
  if (!options.dryRun && options.snapshotRetentionMs !== undefined) {
    try {
      await pruneSnapshots(options.store, new Date(options.now().getTime() - options.snapshotRetentionMs));
    } catch {
      // Housekeeping only: a locked or full database is retried by the next cycle's pruning.
    }
  }
  return report;
}
