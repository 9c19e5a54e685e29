// The commands of "Rehearsing rules" (backtest, why, test, render, send-test): each reads its
// inputs, calls the pure core or the replay, prints, and returns its exit code.
import type { Config } from '../config.ts';
import { closestName } from '../core/suggest.ts';
import { describeError } from '../core/errors.ts';
import type { Snapshot } from '../core/types.ts';
import type { Channel, Rule } from '../rules/index.ts';
import type { RenderedMessage } from './senders.ts';
import { connectApi, openConfiguredStore, requireRulesAndTemplates, storedDataClock } from './app.ts';

export interface CommandIo {
  out: (line: string) => void;
  err: (line: string) => void;
}

/** ` (did you mean x?)` */
function didYouMean(name: string, known: readonly string[]): string {
  const suggestion = closestName(name, known);
  return suggestion ? ` (did you mean ${suggestion}?)` : '';
}

/** The rule named `name`, or the one-line reason why there is none. */
export function findRule(rules: readonly Rule[], name: string): Rule | string {
  const rule = rules.find((r) => r.name === name);
  if (rule) return rule;
  const names = rules.map((r) => r.name);
  return `unknown rule ${name}${didYouMean(name, names)}${names.length > 0 && !closestName(name, names) ? ` (rules: ${names.join(', ')})` : ''}`;
}

export interface BacktestCommandOptions extends CommandIo {
  rules?: readonly string[];
  entities?: readonly string[];
  days?: string;
  from?: string;
  to?: string;
  json: boolean;
  /** Prints a value as JSON (`--json`). */
  printJson: (value: unknown) => void;
  /** Show a progress bar (standard error is a terminal). */
  progress: boolean;
}

/** A progress bar on standard error (cli-progress), cleared when done. */
async function progressBar(): Promise<{ update: (p: { total?: number; done?: number }) => void; stop: () => void }> {
  const { default: progress } = await import('cli-progress');
  const bar = new progress.SingleBar(
    { stream: process.stderr, format: 'backtest |{bar}| {value}/{total} events | {eta_formatted} left', clearOnComplete: true, hideCursor: true },
    progress.Presets.shades_classic,
  );
  let started = false;
  return {
    update: ({ total, done }) => {
      if (total !== undefined && !started) {
        bar.start(total, 0);
        started = true;
      }
      if (done !== undefined && started) bar.update(done);
    },
    stop: () => {
      if (started) bar.stop();
    },
  };
}

export async function runBacktestCommand(config: Config, options: BacktestCommandOptions): Promise<number> {
  const { backtestRange, formatBacktest, inhibitedCount, runBacktest, skippedLine } = await import('./backtest.ts');
  const fail = (message: string, code: number): number => {
    options.err(`edgewatch backtest: ${message}`);
    return code;
  };
  // Arguments first: a bad range is refused before anything is loaded or asked.
  const checked = backtestRange(options, new Date());
  if (!checked.ok) return fail(checked.error, 2);
  const { ruleSet } = await requireRulesAndTemplates(config);
  const { formatProblem } = await import('../rules/index.ts');
  for (const problem of ruleSet.problems) options.err(`${formatProblem(problem)} (rule skipped)`);
  let rules = ruleSet.rules.filter((rule) => rule.source === 'events');
  if (options.rules?.length) {
    rules = [];
    for (const name of options.rules) {
      const rule = findRule(ruleSet.rules, name);
      if (typeof rule === 'string') return fail(rule, 2);
      if (rule.source !== 'events') return fail(`rule ${name} is on ${rule.source}: backtest replays the events' history, so only events rules`, 2);
      if (!rules.includes(rule)) rules.push(rule);
    }
  }
  if (rules.length === 0) return fail(`no events rule to replay in ${config.rulesDir}`, 2);

  // On the built-in sandbox: its world as the last daemon left it in the database (read only), on its own clock.
  const store = config.apiUrl === undefined ? await openConfiguredStore(config, { readonly: true }) : undefined;
  try {
    const connection = await connectApi(config, { sandboxSpeed: 0, ...(store ? { sandboxWorldIn: store } : {}) });
    try {
      const range = connection.sandbox ? backtestRange(options, connection.sandbox.now()) : checked;
      if (!range.ok) return fail(range.error, 2);
      const bar = options.progress ? await progressBar() : undefined;
      let result;
      try {
        result = await runBacktest({ api: connection.api, rules, range, ...(options.entities?.length ? { entities: options.entities } : {}), onProgress: bar?.update });
      } catch (error) {
        return fail(describeError(error), 1);
      } finally {
        bar?.stop();
      }
      const skipped = skippedLine(result.skipped);
      if (options.json) {
        options.printJson(result.report);
        // The contract fixes the report's shape: inhibited alerts are left out of it, and said so here.
        for (const [rule, held] of result.inhibited) {
          if (held.length > 0) options.err(`edgewatch backtest: ${rule}: ${inhibitedCount(held.length)}, left out of alerts`);
        }
        if (skipped) options.err(`edgewatch backtest: ${skipped}`);
      } else {
        for (const line of formatBacktest(result)) options.out(line);
        if (skipped) for (const line of ['', skipped]) options.out(line);
      }
      return 0;
    } finally {
      await connection.close();
    }
  } finally {
    await store?.close();
  }
}

/** `test <file>...`: every test of every file; the last line is `N passed, N failed`. */
export async function runRuleTestsCommand(config: Config, files: readonly string[], io: CommandIo): Promise<number> {
  const { readTemplates } = await import('../render/index.ts');
  const { formatProblem, ruleContext } = await import('../rules/index.ts');
  const { alertLabel, sideBySide } = await import('../rules/rule-tests.ts');
  const { runRuleTestFile } = await import('./rule-tests.ts');
  const templates = await readTemplates(config.templatesDir);
  // Nothing is sent: a channel counts as configured whatever the environment holds.
  const ctx = { ...ruleContext(config, templates.ok ? templates.set.names() : new Set<string>()), transports: { slack: true, email: true } };
  let passed = 0;
  let failed = 0;
  for (const file of files) {
    const outcome = await runRuleTestFile(file, ctx);
    if (outcome.problems.length > 0) {
      for (const problem of outcome.problems) io.out(formatProblem(problem));
      io.out(`FAIL ${file}: not run (${outcome.tests} test${outcome.tests === 1 ? '' : 's'} counted as failed)`);
      failed += outcome.tests;
      continue;
    }
    for (const { test, passed: ok, actual, inhibited } of outcome.results) {
      if (ok) {
        passed++;
        io.out(`ok   ${file}: ${test.name}`);
        continue;
      }
      failed++;
      io.out(`FAIL ${file}:${test.at.line}:${test.at.column}: ${test.name}`);
      for (const line of sideBySide(test.expect, actual)) io.out(`     ${line}`);
      for (const alert of inhibited) io.out(`     inhibited by unless, so not fired: ${alertLabel(alert)}`);
    }
  }
  io.out(`${passed} passed, ${failed} failed`);
  return failed > 0 ? 1 : 0;
}

/** Stored snapshots `why` replays at most, the newest (retention keeps fewer unless it is long). */
const WHY_HISTORY = 10_000;

/** `why <rule> <entity>`: from the stored snapshots, memory and alerts (read only). */
export async function runWhyCommand(config: Config, ruleName: string, entity: string, io: CommandIo): Promise<number> {
  const { ruleSet } = await requireRulesAndTemplates(config);
  const rule = findRule(ruleSet.rules, ruleName);
  if (typeof rule === 'string') {
    io.err(`edgewatch why: ${rule}`);
    return 1;
  }
  const { explainRule } = await import('../rules/explain.ts');
  const { eventTickerOf, unlessSources } = await import('../rules/index.ts');
  const { activeSilences, alertsOnEntity, entityHistory, entityRuleStates, pendingDwell, relatedSnapshots } = await import('../store/index.ts');
  const store = await openConfiguredStore(config, { readonly: true });
  try {
    const stored = await entityHistory(store, rule.source, entity, WHY_HISTORY);
    if (stored.length === 0) {
      io.err(`edgewatch why: unknown entity ${entity}: no ${rule.source} snapshot of it is stored (rule ${rule.name} is on ${rule.source})`);
      return 1;
    }
    const history = stored.map((version) => ({ data: JSON.parse(version.data) as Snapshot, at: version.stored_at, seq: version.seq }));
    const state = (await entityRuleStates(store, rule.source, entity)).find((row) => row.rule === rule.name);
    const memory = state && { armed: state.armed === 1, lastFiredAt: state.last_fired_at };
    const lastAlert = (await alertsOnEntity(store, rule.source, entity, [rule.name])).at(-1);
    const ticker = eventTickerOf(rule.source, entity, history.at(-1)!.data);
    const related = ticker === undefined ? undefined : (await relatedSnapshots(store, new Map([[entity, ticker]]), unlessSources(rule))).get(entity);
    const input = {
      rule,
      entity,
      history,
      memory,
      lastAlert,
      dwell: await pendingDwell(store, rule.name, rule.source, entity),
      // Silences are written and listed on the users' clock (`silence add`, `silence list`).
      silences: await activeSilences(store, new Date()),
      related,
      now: await storedDataClock(config, store),
    };
    for (const line of explainRule(input)) io.out(line);
    return 0;
  } finally {
    await store.close();
  }
}

/** Prints a rendered message under a heading naming its channel. */
function printRendered(io: CommandIo, channel: Channel, rendered: RenderedMessage): void {
  const print = (...texts: string[]): void => texts.flatMap((text) => text.split('\n')).forEach((line) => io.out(line));
  switch (rendered.type) {
    case 'console':
      print(`== ${channel.name} (console)`, ...rendered.lines);
      return;
    case 'slack':
      print(`== ${channel.name} (slack ${rendered.channel})`, 'text:', rendered.content.text, 'blocks:', JSON.stringify(rendered.content.blocks, null, 2));
      return;
    case 'email':
      print(`== ${channel.name} (email to ${rendered.to.join(', ')})`, `subject: ${rendered.content.subject}`, 'text:', rendered.content.text, 'html:', rendered.content.html);
      return;
    case 'webhook':
      print(`== ${channel.name} (webhook ${rendered.url})`, 'body:', JSON.stringify(JSON.parse(rendered.body) as unknown, null, 2));
  }
}

export interface RenderCommandOptions extends CommandIo {
  channel?: string;
  entity?: string;
}

/** `render <rule>`: the message each channel of the rule would get, for a stored snapshot or a sample. */
export async function runRenderCommand(config: Config, ruleName: string, options: RenderCommandOptions): Promise<number> {
  const { ruleSet, templates } = await requireRulesAndTemplates(config);
  const fail = (message: string): number => {
    options.err(`edgewatch render: ${message}`);
    return 1;
  };
  const rule = findRule(ruleSet.rules, ruleName);
  if (typeof rule === 'string') return fail(rule);
  const names = options.channel === undefined ? rule.notify : [options.channel];
  const channels = names.map((name) => ruleSet.channels.get(name));
  const unknown = names.find((_, i) => channels[i] === undefined);
  if (unknown !== undefined) return fail(`unknown channel ${unknown}${didYouMean(unknown, [...ruleSet.channels.keys()])}`);

  const { previewAlert, sampleForTrigger } = await import('../rules/preview.ts');
  const { sampleSnapshots } = await import('../render/index.ts');
  const { renderForChannel } = await import('./senders.ts');
  let alert;
  if (options.entity === undefined) {
    const sample = sampleSnapshots(rule.source);
    // The sample moved so that this rule's own trigger fires on it, as its messages will read.
    const { previous, current } = sampleForTrigger(rule.trigger, sample.previous, sample.current);
    alert = previewAlert(rule, sample.key, previous, current, 2, new Date());
    options.out(`# ${rule.name}: a sample ${rule.source} snapshot (give --entity KEY for a stored one)`);
  } else {
    const { entityHistory } = await import('../store/index.ts');
    const store = await openConfiguredStore(config, { readonly: true });
    const versions = await entityHistory(store, rule.source, options.entity, 2).finally(() => store.close());
    const current = versions.at(-1);
    const previous = versions.length > 1 ? versions[0] : undefined;
    if (current === undefined) return fail(`unknown entity ${options.entity}: no ${rule.source} snapshot of it is stored`);
    const data = (version: { data: string }): Snapshot => JSON.parse(version.data) as Snapshot;
    alert = previewAlert(rule, options.entity, previous && data(previous), data(current), current.seq, new Date());
    options.out(`# ${rule.name}: ${rule.source} ${options.entity}, its latest snapshot (stored ${current.stored_at})`);
  }
  const message = rule.digest ? { kind: 'digest' as const, digest: { id: alert.id, rule: rule.name, alerts: [alert], created_at: alert.fired_at } } : { kind: 'alert' as const, alert };
  for (const channel of channels as Channel[]) printRendered(options, channel, renderForChannel(templates, () => rule.template, channel, message));
  return 0;
}

/** `send-test <channel>`: one message marked as a test, through the channel's real transport. */
export async function runSendTestCommand(config: Config, channelName: string, io: CommandIo): Promise<number> {
  const { ruleSet, templates } = await requireRulesAndTemplates(config);
  const channel = ruleSet.channels.get(channelName);
  if (!channel) {
    const { formatProblem } = await import('../rules/index.ts');
    const problems = ruleSet.problems.filter((problem) => problem.message.includes(`channel "${channelName}"`));
    for (const problem of problems) io.err(formatProblem(problem));
    io.err(`edgewatch send-test: ${problems.length > 0 ? `channel ${channelName} is not valid` : `unknown channel ${channelName}${didYouMean(channelName, [...ruleSet.channels.keys()])}`}`);
    return 1;
  }
  const { testAlert, webhookTestBody } = await import('../render/index.ts');
  const { createChannelTransports, renderForChannel } = await import('./senders.ts');
  const alert = testAlert(channel.name, new Date());
  const rendered = renderForChannel(templates, () => undefined, channel, { kind: 'alert', alert });
  const send = createChannelTransports({ config, out: io.out });
  const outcome = await send(rendered.type === 'webhook' ? { ...rendered, body: webhookTestBody(alert) } : rendered);
  if (!outcome.ok) {
    io.err(`edgewatch send-test: ${channel.name}: not delivered: ${outcome.error}`);
    return 1;
  }
  io.out(`edgewatch send-test: ${channel.name} (${channel.type}): delivered test message ${alert.id}`);
  return 0;
}
