// `edgewatch generate`: starts a report generation (3 credits) and records its run, whose first
// snapshot is its baseline: the runs source watches it from there.
import { runSnapshot, type ResearchApi } from '../sources/index.ts';
import { insertRun, type Store } from '../store/index.ts';
import { ingestItems } from './cycle.ts';

export async function startGeneration(
  store: Store,
  api: ResearchApi,
  venue: string,
  eventKey: string,
  now: Date,
): Promise<{ runId: string; status: string }> {
  const accepted = await api.startGeneration(venue, eventKey);
  await insertRun(store, { run_id: accepted.run_id, venue: accepted.venue, event_key: eventKey, status: accepted.status, created_at: now.toISOString() });
  await ingestItems(store, 'runs', [{ key: accepted.run_id, data: runSnapshot(accepted) }], [], now, { baseline: true });
  return { runId: accepted.run_id, status: accepted.status };
}
