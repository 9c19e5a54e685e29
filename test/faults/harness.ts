// Shared pieces of the fault suite: a pipeline rig on its own sandbox and database, seeded
// randomness, and the views of a database that two runs are compared by.
import { createHash } from 'node:crypto';
import path from 'node:path';
import { createApiClient } from '../../src/api/index.ts';
import { CREDENTIAL_VARIABLES } from '../../src/config.ts';
import type { RuleProblem } from '../../src/core/types.ts';
import { loadRules } from '../../src/rules/index.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { mulberry32, type Rng } from '../../src/sandbox/random.ts';
import { pollSources, type PollSourcesReport } from '../../src/service/cycle.ts';
import { openStore, type Store } from '../../src/store/index.ts';
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

/** The kill tests' rules: an edge crossing and a new event, both to one webhook. */
export function killTestRules(hookUrl: string): string {
  return `
channels:
  hook: { type: webhook, url: "${hookUrl}" }
rules:
  - name: edge-over-10
    source: events
    trigger: { type: crosses, field: edge_pp, above: 10, abs: true }
    notify: [hook]
  - name: new-events
    source: events
    trigger: { type: new }
    notify: [hook]
`;
}

export interface ReferenceRun {
  /** The rules' problems (none expected). */
  problems: RuleProblem[];
  poll: () => Promise<PollSourcesReport>;
  /** Its SQLite file. */
  dbPath: string;
  close: () => Promise<void>;
}

/**
 * The reference a kill test compares with: one uninterrupted in-process run on its own SQLite file
 * (`reference.db` in `dir`), whose events source is polled once per phase.
 */
export async function startReferenceRun(scene: { sandbox: Sandbox; dir: string; rulesDir: string }): Promise<ReferenceRun> {
  const ruleSet = await loadRules(scene.rulesDir, { env: {}, credentials: CREDENTIAL_VARIABLES, templates: new Set(), transports: { slack: false, email: false } });
  const dbPath = path.join(scene.dir, 'reference.db');
  const store: Store = await openStore(dbPath);
  const api = createApiClient({ baseUrl: scene.sandbox.url, apiKey: 'reference', retries: 0 });
  return {
    problems: ruleSet.problems,
    poll: () => pollSources({ store, api, rules: ruleSet.rules, now: () => scene.sandbox.now(), reportsBudget: 10, sources: ['events'] }),
    dbPath,
    close: async () => {
      await api.close();
      await store.close();
    },
  };
}
