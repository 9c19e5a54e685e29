// The daemon's rules runtime: the rule set running now, the channel sender built with it, and the
// status of the last (re)load. A reload that finds problems keeps the last good set running.
import { watch, type FSWatcher } from 'node:fs';
import type { Config } from '../config.ts';
import { EdgewatchError } from '../core/errors.ts';
import type { SendToChannel } from '../notify/index.ts';
import type { TemplateSet } from '../render/index.ts';
import { formatProblem, formatWarning, type RuleSet } from '../rules/index.ts';
import { loadRulesAndTemplates, type LoadedRules } from './app.ts';
import { describeError } from '../core/errors.ts';
import type { RulesStatus } from './health.ts';
import type { Logger } from './logger.ts';
import { createChannelSender } from './senders.ts';

export interface RulesRuntimeOptions {
  config: Config;
  log: Logger;
  /** Where console channels print. */
  out: (line: string) => void;
  now: () => Date;
}

export interface RulesRuntime {
  readonly ruleSet: RuleSet;
  /** Built with each rule set, so that delivery passes reuse the channels' clients. */
  readonly send: SendToChannel;
  /** The templates loaded with the rule set. */
  readonly templates: TemplateSet;
  readonly status: RulesStatus;
  /** Reads the files again; the new set replaces the running one only when it has no problem. */
  reload(): Promise<void>;
  /** Called after every reload, with whether it took effect. */
  onReload(listener: (ok: boolean) => void): void;
  /** Watches the rules and templates folders; `changed` follows the last event of a save. */
  watch(changed: () => void, debounceMs: number): () => void;
}

/** The rules and templates, or their problems as `file:line:column: message` lines. */
async function readRuleFiles(config: Config): Promise<{ loaded?: LoadedRules; problems: string[] }> {
  try {
    const loaded = await loadRulesAndTemplates(config);
    if (!loaded.ok) return { problems: loaded.problems.map(formatProblem) };
    return { loaded, problems: loaded.ruleSet.problems.map(formatProblem) };
  } catch (error) {
    // The templates folder cannot be read (removed, no permission).
    return { problems: [describeError(error)] };
  }
}

/** Loads the rules at start: invalid templates stop the start; rule problems leave the valid rules running. */
export async function startRulesRuntime(options: RulesRuntimeOptions): Promise<RulesRuntime> {
  const { config, log, out, now } = options;
  const first = await readRuleFiles(config);
  if (!first.loaded) throw new EdgewatchError('CONFIG_INVALID', `cannot start: invalid templates:\n  ${first.problems.join('\n  ')}`);
  const listeners: Array<(ok: boolean) => void> = [];
  const senderFor = ({ ruleSet, templates }: LoadedRules): SendToChannel => createChannelSender({ config, templates, rules: ruleSet.rules, out, now });
  let ruleSet = first.loaded.ruleSet;
  let templates = first.loaded.templates;
  let send = senderFor(first.loaded);
  for (const warning of ruleSet.warnings) log.warn(formatWarning(warning));
  let status: RulesStatus = {
    failedAtStart: first.problems.length > 0,
    problems: first.problems,
    loadedAt: now().toISOString(),
    rules: ruleSet.rules.length,
    channels: ruleSet.channels.size,
    lastReload: undefined,
  };

  async function reload(): Promise<void> {
    const { loaded, problems } = await readRuleFiles(config);
    const at = now().toISOString();
    const ok = loaded !== undefined && problems.length === 0;
    if (!ok) {
      for (const problem of problems) log.error(problem);
      log.error({ reload: 'failed', problems: problems.length }, `rules reload failed with ${problems.length} problem(s): the last good rules keep running`);
      status = { ...status, lastReload: { at, ok: false, problems } };
    } else {
      ruleSet = loaded.ruleSet;
      templates = loaded.templates;
      send = senderFor(loaded);
      for (const warning of ruleSet.warnings) log.warn(formatWarning(warning));
      status = { failedAtStart: false, problems: [], loadedAt: at, rules: ruleSet.rules.length, channels: ruleSet.channels.size, lastReload: { at, ok: true, problems: [] } };
      log.info({ reload: 'ok', rules: ruleSet.rules.length, channels: ruleSet.channels.size }, `rules reloaded: ${ruleSet.rules.length} rules, ${ruleSet.channels.size} channels`);
    }
    for (const listener of listeners) listener(ok);
  }

  /** fs.watch reports a save as several events; one call follows the last of them. */
  function watchFolders(changed: () => void, debounceMs: number): () => void {
    let timer: NodeJS.Timeout | undefined;
    const onEvent = (): void => {
      clearTimeout(timer);
      timer = setTimeout(changed, debounceMs);
    };
    const watchers: FSWatcher[] = [];
    for (const [dir, recursive] of [[config.rulesDir, false], [config.templatesDir, true]] as const) {
      try {
        const watcher = watch(dir, { recursive }, onEvent);
        watcher.on('error', (error) => log.warn({ dir, error: describeError(error) }, 'stopped watching a folder'));
        watchers.push(watcher);
      } catch (error) {
        log.warn({ dir, error: describeError(error) }, 'cannot watch the folder: its changes need a restart');
      }
    }
    return () => {
      for (const watcher of watchers) watcher.close();
      clearTimeout(timer);
    };
  }

  return {
    get ruleSet() {
      return ruleSet;
    },
    get send() {
      return send;
    },
    get templates() {
      return templates;
    },
    get status() {
      return status;
    },
    reload,
    onReload: (listener) => void listeners.push(listener),
    watch: watchFolders,
  };
}
