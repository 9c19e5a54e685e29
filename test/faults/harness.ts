// Shared pieces of the fault suite: a pipeline rig on its own sandbox and database, seeded
// randomness, and the views of a database that two runs are compared by.
import { createHash } from 'node:crypto';
import { mulberry32, type Rng } from '../../src/sandbox/random.ts';
import type { Sql } from '../helpers/sql.ts';
import { startPipeline, type Pipeline, type PipelineOptions } from '../helpers/pipeline.ts';

export { mulberry32, type Rng };

/** One independent run of the pipeline: its own sandbox, API client and fresh SQLite file. */
export type Rig = Pipeline;

export type RigOptions = Omit<PipelineOptions, 'templates' | 'dirPrefix'>;

/** A pipeline with the fault suite's defaults: the client's own timeout, fast backoff, a larger reports budget. */
export function startRig(options: RigOptions): Promise<Rig> {
  return startPipeline({
    ...options,
    client: { timeoutMs: 15_000, backoffBaseMs: 5, ...options.client },
    reportsBudget: options.reportsBudget ?? 200,
    dirPrefix: 'edgewatch-fault-',
  });
}

/** What two runs must agree on: the alerts (by rule, entity and id) and their deliveries. */
export function alertKeys(sql: Sql): string[] {
  return sql
    .prepare<[], { id: string; rule: string; entity: string }>('SELECT id, rule, entity FROM alerts ORDER BY id')
    .all()
    .map((a) => `${a.rule} ${a.entity} ${a.id}`);
}

export function deliveryKeys(sql: Sql): string[] {
  return sql
    .prepare<[], { alert_id: string; channel: string }>('SELECT alert_id, channel FROM deliveries ORDER BY alert_id, channel')
    .all()
    .map((d) => `${d.alert_id} ${d.channel}`);
}

/** Every entity's latest snapshot and its sequence number, and how many snapshots are kept. */
export function entityState(sql: Sql): { entities: string[]; snapshots: number } {
  const entities = sql
    .prepare<[], { source: string; entity_key: string; seq: number; data: string }>(
      'SELECT source, entity_key, seq, data FROM entities ORDER BY source, entity_key',
    )
    .all()
    .map((e) => `${e.source} ${e.entity_key} ${e.seq} ${createHash('sha1').update(e.data).digest('hex').slice(0, 12)}`);
  const { n } = sql.prepare<[], { n: number }>('SELECT count(*) AS n FROM snapshots').get()!;
  return { entities, snapshots: n };
}

export function pick<T>(rng: Rng, items: readonly T[]): T {
  return items[Math.floor(rng() * items.length)]!;
}

/** Up to `count` distinct items, in a seeded order. */
export function sample<T>(rng: Rng, items: readonly T[], count: number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy.slice(0, count);
}
