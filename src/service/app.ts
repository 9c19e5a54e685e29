// Wires the adapters for a command: the store, the research API (or the built-in sandbox when no
// API URL is set), the rules and the templates.
import type { Config } from '../config.ts';
import { createApiClient, type ApiClient, type RequestInfo } from '../api/index.ts';
import { loadRules, type RuleSet } from '../rules/index.ts';
import { loadTemplates, type TemplateSet } from '../render/index.ts';
import { startSandbox, type Sandbox } from '../sandbox/index.ts';
import { openStore, type Store } from '../store/index.ts';

/** Simulated minutes per real second of the built-in sandbox, so every trigger happens within minutes. */
export const BUILT_IN_SANDBOX_SPEED = 6;

export interface ApiConnection {
  api: ApiClient;
  /** Set when no EDGEWATCH_API_URL was given and the built-in sandbox serves the API. */
  sandbox?: Sandbox;
  close(): Promise<void>;
}

export async function connectApi(
  config: Config,
  options: { onRequest?: (info: RequestInfo) => void; sandboxSpeed?: number } = {},
): Promise<ApiConnection> {
  let sandbox: Sandbox | undefined;
  let baseUrl = config.apiUrl;
  if (baseUrl === undefined) {
    sandbox = await startSandbox({ port: 0, apiKey: config.apiKey, speed: options.sandboxSpeed ?? BUILT_IN_SANDBOX_SPEED });
    baseUrl = sandbox.url;
  }
  // The sandbox accepts any Bearer key when none is configured; the real API needs the user's.
  const api = createApiClient({ baseUrl, apiKey: config.apiKey ?? (sandbox ? 'sandbox' : undefined), onRequest: options.onRequest });
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
  const ruleSet = await loadRules(config.rulesDir, {
    env: config.env,
    templates: templates.names(),
    transports: { slack: config.slackToken !== undefined, email: config.smtpUrl !== undefined },
  });
  return { ruleSet, templates };
}

export async function openConfiguredStore(config: Config): Promise<Store> {
  return openStore(config.dbPath);
}
