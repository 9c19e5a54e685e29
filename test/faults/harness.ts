// Shared pieces of the fault suite: a pipeline rig on its own sandbox and database, seeded
// randomness, and the views of a database that two runs are compared by.
import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CREDENTIAL_VARIABLES } from '../../src/config.ts';
import { createApiClient, type ApiClient, type ApiClientOptions } from '../../src/api/index.ts';
import { loadRules, type RuleSet } from '../../src/rules/index.ts';
import { mulberry32, type Rng } from '../../src/sandbox/random.ts';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/index.ts';
import { pollSources, type PollSourcesReport } from '../../src/service/cycle.ts';
import { openStore, type Store } from '../../src/store/index.ts';
import { openSql, type Sql } from '../helpers/sql.ts';
import { tempDir } from '../helpers/pipeline.ts';

export { mulberry32, type Rng };

export interface Rig {
  dir: string;
  dbPath: string;
  sandbox: Sandbox;
  api: ApiClient;
  store: Store;
  /** The test's own connection to the database file. */
  sql: Sql;
  ruleSet: RuleSet;
  poll(): Promise<PollSourcesReport>;
  close(): Promise<void>;
}

export interface RigOptions {
  rules: string;
  sandbox?: SandboxOptions;
  /** Api client options beyond the base URL and key. */
  client?: Omit<ApiClientOptions, 'baseUrl' | 'apiKey'>;
  busyTimeoutMs?: number;
  reportsBudget?: number;
  /** Whether slack and email transports count as configured when the rules are checked. */
  transports?: { slack: boolean; email: boolean };
}

/** A sandbox, an API client and a fresh SQLite file: one independent run of the pipeline. */
export async function startRig(options: RigOptions): Promise<Rig> {
  const dir = tempDir('edgewatch-fault-');
  const rulesDir = path.join(dir, 'rules');
  mkdirSync(rulesDir);
  writeFileSync(path.join(rulesDir, 'rules.yaml'), options.rules);
  const ruleSet = await loadRules(rulesDir, { env: {}, credentials: CREDENTIAL_VARIABLES, templates: new Set(), transports: options.transports ?? { slack: false, email: false } });
  if (ruleSet.problems.length > 0) throw new Error(`test rules invalid: ${JSON.stringify(ruleSet.problems)}`);
  const sandbox = await startSandbox({ port: 0, ...options.sandbox });
  const api = createApiClient({ baseUrl: sandbox.url, apiKey: 'fault-key', retries: 0, backoffBaseMs: 5, ...options.client });
  const dbPath = path.join(dir, 'edgewatch.db');
  const store = await openStore(dbPath, { busyTimeoutMs: options.busyTimeoutMs ?? 5000 });
  const sql = openSql(dbPath);
  return {
    dir,
    dbPath,
    sandbox,
    api,
    store,
    sql,
    ruleSet,
    poll: () => pollSources({ store, api, rules: ruleSet.rules, now: () => sandbox.now(), reportsBudget: options.reportsBudget ?? 200 }),
    close: async () => {
      sql.close();
      await store.close();
      await api.close();
      await sandbox.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
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
