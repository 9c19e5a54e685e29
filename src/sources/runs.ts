// runs: the generation runs recorded by `generate`, polled while processing. On completion the
// report's title and trust label are fetched so the notice can name them. A run the API does not
// know (404) will never finish: it is marked `not_found` and no longer polled.
import type { Snapshot } from '../core/types.ts';
import { ingestPage } from '../service/ingest.ts';
import { insertRun, listRuns, markPollSuccess, updateRunStatus } from '../store/index.ts';
import type { Store } from '../store/index.ts';
import { unlessNotFound, type PollContext, type PollResult, type ResearchApi } from './types.ts';

export async function pollRuns(ctx: PollContext): Promise<PollResult> {
  const result: PollResult = { source: 'runs', alerts: [], changed: 0 };
  const processing = await listRuns(ctx.store, { status: 'processing' });
  if (processing.length === 0) return { ...result, skipped: true };

  for (const run of processing) {
    const status = await unlessNotFound(ctx.api.runStatus(run.run_id));
    if (status === undefined) {
      // E.g. started on a built-in sandbox that was since restarted: the other runs still go on.
      if (!ctx.dryRun) await updateRunStatus(ctx.store, run.run_id, 'not_found', ctx.now());
      continue;
    }
    const snapshot: Snapshot = {
      run_id: status.run_id,
      status: status.status,
      venue: status.venue,
      event_ticker: status.event_ticker ?? null,
      requested_url: status.requested_url ?? null,
    };
    if (status.status === 'completed') {
      const report = await ctx.api.report(status.venue, run.event_key);
      snapshot.title = report.title ?? report.name ?? null;
      snapshot.trust_label = report.trust_label ?? null;
      snapshot.trust_score = report.trust_score ?? null;
    }
    const now = ctx.now();
    const ingested = ingestPage(ctx.store, [{ key: run.run_id, data: snapshot }], {
      source: 'runs',
      rules: ctx.rules,
      baseline: false,
      now,
      dryRun: ctx.dryRun,
    });
    result.alerts.push(...ingested.alerts);
    result.changed += ingested.changed;
    if (!ctx.dryRun && status.status !== run.status) await updateRunStatus(ctx.store, run.run_id, status.status, now);
  }
  if (!ctx.dryRun) await markPollSuccess(ctx.store, 'runs', ctx.now());
  return result;
}

/** Starts a generation (3 credits) and records the run, its first snapshot being the baseline. */
export async function startGeneration(
  store: Store,
  api: ResearchApi,
  venue: string,
  eventKey: string,
  now: Date,
): Promise<{ runId: string; status: string }> {
  const accepted = await api.startGeneration(venue, eventKey);
  await insertRun(store, { run_id: accepted.run_id, venue: accepted.venue, event_key: eventKey, status: accepted.status, created_at: now.toISOString() });
  const snapshot: Snapshot = {
    run_id: accepted.run_id,
    status: accepted.status,
    venue: accepted.venue,
    event_ticker: accepted.event_ticker,
    requested_url: null,
  };
  ingestPage(store, [{ key: accepted.run_id, data: snapshot }], { source: 'runs', rules: [], baseline: true, now });
  return { runId: accepted.run_id, status: accepted.status };
}
