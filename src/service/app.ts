// Wires the adapters for a command: the store, the research API (or the built-in sandbox when no
// API URL is set), the rules and the templates. Each is imported when first used, so that a command
// loads only what it needs (`alerts` no templates, `validate` no database, neither the sandbox).
import type { Config } from '../config.ts';
import type { ApiClient, RequestInfo } from '../api/index.ts';
import type { RuleSet } from '../rules/index.ts';
import type { TemplateSet } from '../render/index.ts';
import type { Sandbox, SandboxOptions } from '../sandbox/index.ts';
import { EdgewatchError } from '../core/errors.ts';
import type { RuleProblem } from '../core/types.ts';
import { z } from 'zod';
import type { Store } from '../store/index.ts';

/**
 * Simulated minutes per real second of the built-in sandbox: every trigger of the example rules
 * happens within minutes, a few alerts a minute (test/integration/demo-pace.test.ts).
 */
export const BUILT_IN_SANDBOX_SPEED = 2;

/** Where a running daemon's built-in sandbox listens, recorded in the database for other commands. */
export const SANDBOX_URL_KEY = 'sandbox_url';

/** The built-in sandbox's world (seed, start, clock), kept with the database so that the next start continues it. */
export const SANDBOX_WORLD_KEY = 'sandbox_world';

const SavedWorld = z
  .object({ seed: z.number().int(), start: z.iso.datetime(), now: z.iso.datetime() })
  .refine((world) => Date.parse(world.now) >= Date.parse(world.start));

/**
 * Simulated minutes a continued world skips past its saved clock: a crash can lose the save that
 * follows a poll, and that poll's data is newer than the save before by at most its duration.
 */
export const RESUME_MARGIN_MINUTES = 10;

export interface ApiConnection {
  api: ApiClient;
  /** Set when no EDGEWATCH_API_URL was given and this process started the built-in sandbox. */
  sandbox?: Sandbox;
  /** The simulated time the built-in sandbox continued its world at, when one was kept with the database. */
  resumedAt?: Date;
  /** Keeps the built-in sandbox's clock with the database (see sandboxWorldIn); a no-op otherwise. */
  saveSandboxWorld(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The clock rules judge by (dwell, due dates): the data's own. The built-in sandbox's world runs
 * fast on a simulated clock, and its dates (a KPI's expected report date) are in that world's time.
 */
export function dataClock(connection: Pick<ApiConnection, 'sandbox'>, now: () => Date): () => Date {
  const { sandbox } = connection;
  return sandbox ? () => sandbox.now() : now;
}

/**
 * The data's clock for a command that reads the store and polls nothing (`why`): on the built-in
 * sandbox, its world's simulated time as the daemon last saved it (after each poll); otherwise, or
 * when no world was saved, now.
 */
export async function storedDataClock(config: Pick<Config, 'apiUrl'>, store: Store): Promise<Date> {
  const saved = config.apiUrl === undefined ? await savedWorld(store) : undefined;
  return saved ? new Date(saved.now) : new Date();
}

/** The built-in sandbox of a daemon running on this database, if it answers. */
export async function runningSandbox(store: Store): Promise<string | undefined> {
  const { getMeta } = await import('../store/index.ts');
  // undici is CommonJS: its functions are properties of the default export (in the esbuild bundle too).
  const { request } = (await import('undici')).default;
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
  /** With no API URL: the database the built-in sandbox's world is kept with, so that it continues where it stopped. */
  sandboxWorldIn?: Store;
}

/** The world an earlier built-in sandbox left in this database; a missing or unreadable one starts afresh. */
async function savedWorld(store: Store): Promise<z.infer<typeof SavedWorld> | undefined> {
  const { getMeta } = await import('../store/index.ts');
  const text = await getMeta(store, SANDBOX_WORLD_KEY);
  if (text === undefined) return undefined;
  try {
    const parsed = SavedWorld.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

export async function connectApi(config: Config, options: ConnectApiOptions = {}): Promise<ApiConnection> {
  let sandbox: Sandbox | undefined;
  let baseUrl = config.apiUrl ?? options.sandboxUrl;
  if (baseUrl === undefined && options.reuseSandboxOf) baseUrl = await runningSandbox(options.reuseSandboxOf);
  const onSandbox = config.apiUrl === undefined;
  let resumedAt: Date | undefined;
  if (baseUrl === undefined) {
    const saved = options.sandboxWorldIn ? await savedWorld(options.sandboxWorldIn) : undefined;
    let kept: Pick<SandboxOptions, 'seed' | 'startTime' | 'resumeAt'> = {};
    if (saved) {
      resumedAt = new Date(Date.parse(saved.now) + RESUME_MARGIN_MINUTES * 60_000);
      kept = { seed: saved.seed, startTime: new Date(saved.start), resumeAt: resumedAt };
    }
    const { startSandbox } = await import('../sandbox/index.ts');
    sandbox = await startSandbox({ port: 0, apiKey: config.apiKey, speed: options.sandboxSpeed ?? BUILT_IN_SANDBOX_SPEED, ...kept });
    baseUrl = sandbox.url;
  }
  // The sandbox accepts any Bearer key when none is configured; the real API needs the user's.
  const { createApiClient } = await import('../api/index.ts');
  const { setMeta } = await import('../store/index.ts');
  const api = createApiClient({
    baseUrl,
    apiKey: config.apiKey ?? (onSandbox ? 'sandbox' : undefined),
    maxPages: config.maxPages,
    maxResponseBytes: config.maxResponseBytes,
    onRequest: options.onRequest,
  });
  const worldStore = options.sandboxWorldIn;
  return {
    api,
    sandbox,
    resumedAt,
    saveSandboxWorld: async () => {
      if (!sandbox || !worldStore) return;
      const world = { seed: sandbox.seed, start: sandbox.startTime.toISOString(), now: sandbox.now().toISOString() };
      await setMeta(worldStore, SANDBOX_WORLD_KEY, JSON.stringify(world));
    },
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

/**
 * Templates first: the rules' `template:` names are checked against them. Invalid templates are
 * returned as positioned problems (the rules are then not read); rule problems are in the rule set.
 */
export async function loadRulesAndTemplates(config: Config): Promise<({ ok: true } & LoadedRules) | { ok: false; problems: RuleProblem[] }> {
  const { readTemplates } = await import('../render/index.ts');
  const { loadRules, ruleContext } = await import('../rules/index.ts');
  const templates = await readTemplates(config.templatesDir);
  if (!templates.ok) return templates;
  const ruleSet = await loadRules(config.rulesDir, ruleContext(config, templates.set.names()));
  return { ok: true, ruleSet, templates: templates.set };
}

/** For a command that cannot run without valid templates: their problems abort it, one line each. */
export async function requireRulesAndTemplates(config: Config): Promise<LoadedRules> {
  const loaded = await loadRulesAndTemplates(config);
  const { formatProblem } = await import('../rules/index.ts');
  if (!loaded.ok) throw new EdgewatchError('CONFIG_INVALID', `invalid templates:\n  ${loaded.problems.map(formatProblem).join('\n  ')}`);
  return loaded;
}

export async function openConfiguredStore(config: Config, options: { readonly?: boolean } = {}): Promise<Store> {
  const { openStore } = await import('../store/index.ts');
  return openStore(config.dbPath, options);
}
