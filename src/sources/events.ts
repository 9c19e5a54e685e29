// events: newest captured first, stopping at what was already seen (the watermark, with overlap).
import { getSourceState, markPollSuccess } from '../store/index.ts';
import { ingestPage, type SnapshotItem } from '../service/ingest.ts';
import { readAhead } from './read-ahead.ts';
import type { PollContext, PollResult } from './types.ts';

/** Re-read this far behind the watermark, for snapshots published a little late; unchanged rows cost nothing. */
export const WATERMARK_OVERLAP_MS = 5 * 60_000;
const PAGE_SIZE = 200;

export async function pollEvents(ctx: PollContext): Promise<PollResult> {
  const state = await getSourceState(ctx.store, 'events');
  const baseline = !state?.baseline_at;
  const watermarkMs = state?.watermark ? Date.parse(state.watermark) : undefined;
  const stopBeforeMs = watermarkMs === undefined ? undefined : watermarkMs - WATERMARK_OVERLAP_MS;
  let newestMs = watermarkMs ?? Number.NEGATIVE_INFINITY;
  let newest = state?.watermark ?? null;
  const result: PollResult = { source: 'events', alerts: [], changed: 0, baseline };

  // The next page is fetched while this one is stored, unless this one already reaches the seen rows.
  const reachesSeen = (row: { captured_at: string }): boolean => stopBeforeMs !== undefined && Date.parse(row.captured_at) < stopBeforeMs;
  const pages = readAhead(ctx.api.eventPages({ limit: PAGE_SIZE, includeEligibility: true }), (page) => !page.rows.some(reachesSeen));
  for await (const page of pages) {
    const items: SnapshotItem[] = [];
    let reachedSeen = false;
    for (const row of page.rows) {
      if (reachesSeen(row)) {
        reachedSeen = true;
        break; // newest first: everything after this row is older still
      }
      const capturedMs = Date.parse(row.captured_at);
      if (capturedMs > newestMs) {
        newestMs = capturedMs;
        newest = row.captured_at;
      }
      const edge = row.edge_pp;
      items.push({ key: row.event_ticker, data: { ...row, abs_edge_pp: typeof edge === 'number' ? Math.abs(edge) : null } });
    }
    const ingested = ingestPage(ctx.store, items, {
      source: 'events',
      rules: ctx.rules,
      baseline,
      now: ctx.now(),
      dryRun: ctx.dryRun,
    });
    result.alerts.push(...ingested.alerts);
    result.changed += ingested.changed;
    if (reachedSeen) break;
  }
  // The watermark moves only once every page down to the old watermark is stored.
  if (!ctx.dryRun) await markPollSuccess(ctx.store, 'events', ctx.now(), { watermark: newest });
  return result;
}
