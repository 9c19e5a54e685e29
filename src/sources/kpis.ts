// kpis: the whole board, every status. When an actual appears, the KPI detail is fetched once so
// the alert carries analysis.surprise and the actual's sources (under `detail`, carried forward).
import type { Snapshot } from '../core/types.ts';
import { ingestPage, type SnapshotItem } from '../service/ingest.ts';
import { getSourceState, hotStatements, markPollSuccess } from '../store/index.ts';
import { readAhead } from './read-ahead.ts';
import type { PollContext, PollResult } from './types.ts';

const PAGE_SIZE = 200;

function hasValue(value: unknown): boolean {
  return value !== null && value !== undefined;
}

export async function pollKpis(ctx: PollContext): Promise<PollResult> {
  const state = await getSourceState(ctx.store, 'kpis');
  const baseline = !state?.baseline_at;
  const { getEntity } = hotStatements(ctx.store.raw);
  const result: PollResult = { source: 'kpis', alerts: [], changed: 0, baseline };

  // The next page is fetched while this one is stored.
  for await (const page of readAhead(ctx.api.kpiPages({ status: 'all', limit: PAGE_SIZE }))) {
    const items: SnapshotItem[] = [];
    const needDetail: SnapshotItem[] = [];
    for (const row of page.rows) {
      const item: SnapshotItem = { key: row.id, data: row };
      items.push(item);
      if (!hasValue(row.actual)) continue;
      const stored = getEntity.get('kpis', row.id);
      const prev = stored ? (JSON.parse(stored.data) as Snapshot) : undefined;
      if (prev && hasValue(prev.actual)) {
        // Carried forward; an actual already there at the baseline stays without a detail (fetching
        // it later would store a second snapshot for no change).
        if (prev.detail !== undefined) item.data = { ...row, detail: prev.detail };
      } else if (!baseline) {
        needDetail.push(item);
      }
    }
    await Promise.all(
      needDetail.map(async (item) => {
        const detail = await ctx.api.kpi(item.key);
        item.data = { ...item.data, detail: { actual: detail.actual ?? null, analysis: detail.analysis ?? null } };
      }),
    );
    const ingested = ingestPage(ctx.store, items, {
      source: 'kpis',
      rules: ctx.rules,
      baseline,
      now: ctx.now(),
      dryRun: ctx.dryRun,
    });
    result.alerts.push(...ingested.alerts);
    result.changed += ingested.changed;
  }
  if (!ctx.dryRun) await markPollSuccess(ctx.store, 'kpis', ctx.now());
  return result;
}
