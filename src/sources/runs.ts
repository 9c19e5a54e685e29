// runs: the generation runs recorded by `generate`, polled while processing. On completion the
// report's title and trust label are fetched so the notice can name them. A run the API does not
// know (404) will never finish: it is marked `not_found` and no longer polled. Each run is a page.
import type { Snapshot } from '../core/types.ts';
import { unlessNotFound, type FetchContext, type ResearchApi, type SourcePage, type SourcePages } from './types.ts';

type RunStatus = Awaited<ReturnType<ResearchApi['runStatus']>>;

/** A run's snapshot: its status as the API reports it (a run just accepted has no requested_url yet). */
export function runSnapshot(status: Pick<RunStatus, 'run_id' | 'status' | 'venue' | 'event_ticker' | 'requested_url'>): Snapshot {
  return {
    run_id: status.run_id,
    status: status.status,
    venue: status.venue,
    event_ticker: status.event_ticker ?? null,
    requested_url: status.requested_url ?? null,
  };
}

export async function fetchRuns(ctx: FetchContext): Promise<SourcePages> {
  const processing = await ctx.stored.processingRuns();
  if (processing.length === 0) return 'idle';
  return checkRuns(ctx, processing);
}

async function* checkRuns(ctx: FetchContext, runs: Awaited<ReturnType<FetchContext['stored']['processingRuns']>>): AsyncGenerator<SourcePage> {
  for (const run of runs) {
    const status = await unlessNotFound(ctx.api.runStatus(run.run_id));
    if (status === undefined) {
      // E.g. started on a built-in sandbox that was since restarted: the other runs still go on.
      yield { items: [], runStatuses: [{ runId: run.run_id, status: 'not_found' }] };
      continue;
    }
    const snapshot = runSnapshot(status);
    if (status.status === 'completed') {
      const report = await ctx.api.report(status.venue, run.event_key);
      snapshot.title = report.title ?? report.name ?? null;
      snapshot.trust_label = report.trust_label ?? null;
      snapshot.trust_score = report.trust_score ?? null;
    }
    yield { items: [{ key: run.run_id, data: snapshot }], runStatuses: status.status === run.status ? [] : [{ runId: run.run_id, status: status.status }] };
  }
}
