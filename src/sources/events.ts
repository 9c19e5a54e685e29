// events: newest captured first, stopping at what was already seen (the watermark, with overlap).
import type { Snapshot, SnapshotItem } from '../core/types.ts';
import { readAhead } from './read-ahead.ts';
import type { FetchContext, SourcePage } from './types.ts';

/** Re-read this far behind the watermark, for snapshots published a little late; unchanged rows cost nothing. */
export const WATERMARK_OVERLAP_MS = 5 * 60_000;
const PAGE_SIZE = 200;

/** An events snapshot: the API's row (a list row, or a history row for `backtest`) plus `abs_edge_pp`. */
export function eventSnapshot(row: Record<string, unknown>): Snapshot {
  const edge = row.edge_pp;
  return { ...row, abs_edge_pp: typeof edge === 'number' ? Math.abs(edge) : null };
}

export async function* fetchEvents(ctx: FetchContext): AsyncGenerator<SourcePage> {
  const watermarkMs = ctx.watermark ? Date.parse(ctx.watermark) : undefined;
  const stopBeforeMs = watermarkMs === undefined ? undefined : watermarkMs - WATERMARK_OVERLAP_MS;
  let newestMs = watermarkMs ?? Number.NEGATIVE_INFINITY;
  let newest = ctx.watermark;

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
      items.push({ key: row.event_ticker, data: eventSnapshot(row) });
    }
    // The watermark moves only once every page down to the old watermark is stored (the cycle
    // records the last page's at the poll's success).
    yield { items, watermark: newest };
    if (reachedSeen) break;
  }
}
