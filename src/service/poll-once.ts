// `poll --once`: one cycle of the same code the daemon runs, then the deliveries that are due.
import type { Config } from '../config.ts';
import { formatProblem } from '../rules/index.ts';
import { consoleLine } from '../render/index.ts';
import { closeDueBatches, deliverDue, type DeliverOptions, type DeliverReport } from '../notify/index.ts';
import type { RuleSet } from '../rules/index.ts';
import type { TemplateSet } from '../render/index.ts';
import type { Store } from '../store/index.ts';
import { connectApi, loadRulesAndTemplates, openConfiguredStore } from './app.ts';
import { pollSources } from './cycle.ts';
import { createChannelSender, GROUPING_KINDS } from './senders.ts';

export interface PollOnceOptions {
  dryRun: boolean;
  out: (line: string) => void;
  err: (line: string) => void;
}

export async function runPollOnce(config: Config, options: PollOnceOptions): Promise<number> {
  const { ruleSet, templates } = await loadRulesAndTemplates(config);
  for (const problem of ruleSet.problems) options.err(`${formatProblem(problem)} (rule skipped)`);
  const store = await openConfiguredStore(config);
  // With no API URL: the sandbox of a daemon running on this database, else a fresh one.
  const connection = await connectApi(config, { sandboxSpeed: 0, reuseSandboxOf: store });
  if (connection.sandbox) options.err('edgewatch poll: no EDGEWATCH_API_URL: polling a fresh built-in sandbox (start `npm start` to watch one that moves)');
  try {
    const report = await pollSources({
      store,
      api: connection.api,
      rules: ruleSet.rules,
      now: () => new Date(),
      dryRun: options.dryRun,
      reportsBudget: config.reportsBudget,
      snapshotRetentionMs: config.snapshotRetentionMs,
    });
    for (const failure of report.failures) options.err(`edgewatch poll: source ${failure.source} failed: ${failure.error}`);
    if (options.dryRun) {
      for (const alert of report.alerts) options.out(`would fire: ${consoleLine(alert)}`);
      return report.failures.length > 0 ? 1 : 0;
    }
    const delivery = await deliverNow(store, config, ruleSet, templates, options.out);
    return report.failures.length > 0 || delivery.dead > 0 ? 1 : 0;
  } finally {
    await connection.close();
    await store.close();
  }
}

/** Closes the digest batches that are due (all of them with `flush`) and sends everything due. */
export async function deliverNow(
  store: Store,
  config: Config,
  ruleSet: RuleSet,
  templates: TemplateSet,
  out: (line: string) => void,
  options: { flush?: boolean; onOutcome?: DeliverOptions['onOutcome'] } = {},
): Promise<DeliverReport> {
  const now = new Date();
  closeDueBatches(store, new Map(ruleSet.rules.map((rule) => [rule.name, rule])), now, options);
  return deliverDue(store, {
    channels: ruleSet.channels,
    send: createChannelSender({ config, templates, rules: ruleSet.rules, out }),
    now: () => new Date(),
    retry: { attempts: config.deliveryAttempts, baseMs: 30_000, maxMs: 3_600_000 },
    groupKinds: GROUPING_KINDS,
    groupAbove: config.slackGroupAbove,
    onOutcome: options.onOutcome,
  });
}

/** `digest --flush`: every pending digest sent now. */
export async function runDigestFlush(config: Config, options: Omit<PollOnceOptions, 'dryRun'>): Promise<number> {
  const { ruleSet, templates } = await loadRulesAndTemplates(config);
  for (const problem of ruleSet.problems) options.err(`${formatProblem(problem)} (rule skipped)`);
  const store = await openConfiguredStore(config);
  try {
    const report = await deliverNow(store, config, ruleSet, templates, options.out, { flush: true });
    return report.dead > 0 || report.retrying > 0 ? 1 : 0;
  } finally {
    await store.close();
  }
}
