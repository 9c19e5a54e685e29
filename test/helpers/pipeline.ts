// A pipeline on a real sandbox and a real SQLite file in a temporary folder.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { CREDENTIAL_VARIABLES } from '../../src/config.ts';
import { createApiClient, type ApiClient, type ApiClientOptions } from '../../src/api/index.ts';
import type { Alert } from '../../src/core/types.ts';
import { loadRules, type RuleSet } from '../../src/rules/index.ts';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/index.ts';
import { pollSources, type PollSourcesReport } from '../../src/service/cycle.ts';
import { openStore, type Store } from '../../src/store/index.ts';
import { tempDir, writeRules } from './files.ts';
import { openSql, type Sql } from './sql.ts';

export const TEMPLATES_DIR = path.resolve(import.meta.dirname, '../../templates');

export interface Pipeline {
  dir: string;
  dbPath: string;
  sandbox: Sandbox;
  api: ApiClient;
  store: Store;
  /** The test's own connection to the database file, to read what the store wrote. */
  sql: Sql;
  ruleSet: RuleSet;
  /** One poll of every source; returns what it reported. */
  poll(options?: { dryRun?: boolean }): Promise<PollSourcesReport>;
  /** Every alert stored, oldest first. */
  storedAlerts(): Alert[];
  /** Close and reopen the database, as a restart would. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The alerts `a` with their snapshot as `current`: the entity's latest, or the superseded one it
 * fired on, stored under the alert's feed (a market-search query's) or its source.
 */
const ALERT_CURRENT = `COALESCE(e.data, s.data) AS current FROM alerts a
  LEFT JOIN entities e ON e.source = COALESCE(a.feed, a.source) AND e.entity_key = a.entity AND e.seq = a.seq
  LEFT JOIN snapshots s ON s.source = COALESCE(a.feed, a.source) AND s.entity_key = a.entity AND s.seq = a.seq
  ORDER BY a.rowid`;

export interface PipelineOptions {
  rules: string;
  sandbox?: SandboxOptions;
  /** API client options beyond the base URL and key; by default no retry and a 5 s timeout. */
  client?: Omit<ApiClientOptions, 'baseUrl' | 'apiKey'>;
  busyTimeoutMs?: number;
  reportsBudget?: number;
  /** Which channel transports count as configured when the rules are loaded (default none). */
  transports?: { slack: boolean; email: boolean };
  /** Template names the rules may use (`template: <name>`); default none. */
  templates?: ReadonlySet<string>;
  /** The temporary folder's name prefix. */
  dirPrefix?: string;
}

export async function startPipeline(options: PipelineOptions): Promise<Pipeline> {
  const dir = tempDir(options.dirPrefix);
  const rulesDir = writeRules(dir, options.rules);
  const dbPath = path.join(dir, 'edgewatch.db');
  const ruleSet = await loadRules(rulesDir, { env: {}, credentials: CREDENTIAL_VARIABLES, templates: new Set(options.templates), transports: options.transports ?? { slack: false, email: false } });
  if (ruleSet.problems.length > 0) throw new Error(`test rules invalid: ${JSON.stringify(ruleSet.problems)}`);
  const sandbox = await startSandbox({ port: 0, ...options.sandbox });
  const api = createApiClient({ baseUrl: sandbox.url, apiKey: 'test-key', retries: 0, timeoutMs: 5000, backoffBaseMs: 10, ...options.client });
  let store = await openStore(dbPath, { busyTimeoutMs: options.busyTimeoutMs });
  const sql = openSql(dbPath);

  const pipeline: Pipeline = {
    dir,
    dbPath,
    sandbox,
    api,
    sql,
    get store() {
      return store;
    },
    ruleSet,
    poll: (pollOptions = {}) =>
      pollSources({ store, api, rules: ruleSet.rules, now: () => sandbox.now(), dryRun: pollOptions.dryRun, reportsBudget: options.reportsBudget ?? 100 }),
    storedAlerts: () =>
      sql
        .prepare<[], Record<string, string>>(`SELECT a.*, ${ALERT_CURRENT}`)
        .all()
        .map((row) => ({ ...row, changes: JSON.parse(row.changes!), current: JSON.parse(row.current!) }) as unknown as Alert),
    restart: async () => {
      await store.close();
      store = await openStore(dbPath, { busyTimeoutMs: options.busyTimeoutMs });
    },
    close: async () => {
      sql.close();
      await store.close();
      await api.close();
      await sandbox.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return pipeline;
}
