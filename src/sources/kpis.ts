// kpis: the whole board, every status. When an actual appears, the KPI detail is fetched once so
// the alert carries analysis.surprise and the actual's sources (under `detail`, carried forward).
import type { Snapshot, SnapshotItem } from '../core/types.ts';
import { readAhead } from './read-ahead.ts';
import type { FetchContext, SourcePage } from './types.ts';

const PAGE_SIZE = 200;

function hasValue(value: unknown): boolean {
  return value !== null && value !== undefined;
}

export async function* fetchKpis(ctx: FetchContext): AsyncGenerator<SourcePage> {
  // The next page is fetched while this one is stored.
  for await (const page of readAhead(ctx.api.kpiPages({ status: 'all', limit: PAGE_SIZE }))) {
    const items: SnapshotItem[] = page.rows.map((row) => ({ key: row.id, data: row }));
    const withActual = items.filter((item) => hasValue(item.data.actual));
    const stored = withActual.length > 0 ? await ctx.stored.latestSnapshots('kpis', withActual.map((item) => item.key)) : new Map<string, Snapshot>();
    const needDetail: SnapshotItem[] = [];
    for (const item of withActual) {
      const prev = stored.get(item.key);
      if (prev && hasValue(prev.actual)) {
        // Carried forward; an actual already there at the baseline stays without a detail (fetching
        // it later would store a second snapshot for no change).
        if (prev.detail !== undefined) item.data = { ...item.data, detail: prev.detail };
      } else if (!ctx.baseline) {
        needDetail.push(item);
      }
    }
    await Promise.all(
      needDetail.map(async (item) => {
        const detail = await ctx.api.kpi(item.key);
        item.data = { ...item.data, detail: { actual: detail.actual ?? null, analysis: detail.analysis ?? null } };
      }),
    );
    yield { items };
  }
}
