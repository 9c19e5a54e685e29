// A pipeline on a real sandbox and a real SQLite file in a temporary folder.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { CREDENTIAL_VARIABLES } from '../../src/config.ts';
import { createApiClient, type ApiClient, type ApiClientOptions } from '../../src/api/index.ts';
import type { Alert } from '../../src/core/types.ts';
import { loadRules, type RuleSet } from '../../src/rules/index.ts';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/index.ts';
import { pollSources, type PollSourcesReport } from '../../src/service/cycle.ts';
import { ALERT_CURRENT, openStore, type Store } from '../../src/store/index.ts';
import { tempDir, writeRules } from './files.ts';

export const TEMPLATES_DIR = path.resolve(import.meta.dirname, '../../templates');

export interface Pipeline {
  dir: string;
  dbPath: string;
  sandbox: Sandbox;
  api: ApiClient;
  store: Store;
  ruleSet: RuleSet;
  /** One poll of every source; returns what it reported. */
  poll(options?: { dryRun?: boolean }): Promise<PollSourcesReport>;
  /** Every alert stored, oldest first. */
  storedAlerts(): Alert[];
  /** Close and reopen the database, as a restart would. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

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

  const pipeline: Pipeline = {
    dir,
    dbPath,
    sandbox,
    api,
    get store() {
      return store;
    },
    ruleSet,
    poll: (pollOptions = {}) =>
      pollSources({ store, api, rules: ruleSet.rules, now: () => sandbox.now(), dryRun: pollOptions.dryRun, reportsBudget: options.reportsBudget ?? 100 }),
    storedAlerts: () =>
      store.raw
        .prepare<[], Record<string, string>>(`SELECT a.*, ${ALERT_CURRENT.column} FROM alerts a ${ALERT_CURRENT.joins} ORDER BY a.rowid`)
        .all()
        .map((row) => ({ ...row, changes: JSON.parse(row.changes!), current: JSON.parse(row.current!) }) as unknown as Alert),
    restart: async () => {
      await store.close();
      store = await openStore(dbPath, { busyTimeoutMs: options.busyTimeoutMs });
    },
    close: async () => {
      await store.close();
      await api.close();
      await sandbox.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return pipeline;
}
