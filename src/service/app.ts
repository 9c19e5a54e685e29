// Wires the adapters for a command: the store, the research API (or the built-in sandbox when no
// API URL is set), the rules and the templates.
import type { Config } from '../config.ts';
import { createApiClient, type ApiClient, type RequestInfo } from '../api/index.ts';
import { loadRules, ruleContext, type RuleSet } from '../rules/index.ts';
import { loadTemplates, type TemplateSet } from '../render/index.ts';
import { startSandbox, type Sandbox } from '../sandbox/index.ts';
import { request } from 'undici';
import { getMeta, openStore, type Store } from '../store/index.ts';

/** Simulated minutes per real second of the built-in sandbox, so every trigger happens within minutes. */
export const BUILT_IN_SANDBOX_SPEED = 6;

/** Where a running daemon's built-in sandbox listens, recorded in the database for other commands. */
export const SANDBOX_URL_KEY = 'sandbox_url';

export interface ApiConnection {
  api: ApiClient;
  /** Set when no EDGEWATCH_API_URL was given and this process started the built-in sandbox. */
  sandbox?: Sandbox;
  close(): Promise<void>;
}

/** The built-in sandbox of a daemon running on this database, if it answers. */
export async function runningSandbox(store: Store): Promise<string | undefined> {
  const url = await getMeta(store, SANDBOX_URL_KEY);
  if (url === undefined) return undefined;
  try {
    const probe = await request(`${url}/predictions/kpi-events?limit=1`, {
      headers: { authorization: 'Bearer sandbox' },
      headersTimeout: 1_000,
      bodyTimeout: 1_000,
    });
    await probe.body.dump();
    return probe.statusCode === 200 ? url : undefined;
  } catch {
    return undefined;
  }
}

export interface ConnectApiOptions {
  onRequest?: (info: RequestInfo) => void;
  sandboxSpeed?: number;
  /** With no API URL: use the built-in sandbox of a daemon running on this store when there is one. */
  reuseSandboxOf?: Store;
  /** With no API URL: the running built-in sandbox to use, already found by `runningSandbox`. */
  sandboxUrl?: string;
}

export async function connectApi(config: Config, options: ConnectApiOptions = {}): Promise<ApiConnection> {
  let sandbox: Sandbox | undefined;
  let baseUrl = config.apiUrl ?? options.sandboxUrl;
  if (baseUrl === undefined && options.reuseSandboxOf) baseUrl = await runningSandbox(options.reuseSandboxOf);
  const onSandbox = config.apiUrl === undefined;
  if (baseUrl === undefined) {
    sandbox = await startSandbox({ port: 0, apiKey: config.apiKey, speed: options.sandboxSpeed ?? BUILT_IN_SANDBOX_SPEED });
    baseUrl = sandbox.url;
  }
  // The sandbox accepts any Bearer key when none is configured; the real API needs the user's.
  const api = createApiClient({
    baseUrl,
    apiKey: config.apiKey ?? (onSandbox ? 'sandbox' : undefined),
    maxPages: config.maxPages,
    maxResponseBytes: config.maxResponseBytes,
    onRequest: options.onRequest,
  });
  return {
    api,
    sandbox,
    close: async () => {
      await api.close();
      await sandbox?.close();
    },
  };
}

export interface LoadedRules {
  ruleSet: RuleSet;
  templates: TemplateSet;
}

/** Templates first: the rules' `template:` names are checked against them. */
export async function loadRulesAndTemplates(config: Config): Promise<LoadedRules> {
  const templates = await loadTemplates(config.templatesDir);
  const ruleSet = await loadRules(config.rulesDir, ruleContext(config, templates.names()));
  return { ruleSet, templates };
}

export async function openConfiguredStore(config: Config, options: { readonly?: boolean } = {}): Promise<Store> {
  return openStore(config.dbPath, options);
}
