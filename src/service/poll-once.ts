// `poll --once` and `digest --flush`: the daemon's own code, run once.
import type { Config } from '../config.ts';
import { SOURCES } from '../core/types.ts';
import { formatProblem } from '../rules/index.ts';
import { consoleLine } from '../render/index.ts';
import { connectApi, dataClock, openConfiguredStore, requireRulesAndTemplates } from './app.ts';
import { pollSources } from './cycle.ts';
import { deliverNow } from './deliver.ts';
import { createExplainer } from './explain.ts';
import { createChannelSender } from './senders.ts';

export interface PollOnceOptions {
  dryRun: boolean;
  out: (line: string) => void;
  err: (line: string) => void;
}

export async function runPollOnce(config: Config, options: PollOnceOptions): Promise<number> {
  const { ruleSet, templates } = await requireRulesAndTemplates(config);
  for (const problem of ruleSet.problems) options.err(`${formatProblem(problem)} (rule skipped)`);
  const store = await openConfiguredStore(config);
  // With no API URL: the sandbox of a daemon running on this database, else its world where the
  // last daemon left it (not saved again: a still clock would only drift by the resume margin).
  const connection = await connectApi(config, { sandboxSpeed: 0, reuseSandboxOf: store, sandboxWorldIn: store });
  if (connection.sandbox) {
    const where = connection.resumedAt ? `the built-in sandbox's world where the last daemon left it` : 'a fresh built-in sandbox';
    options.err(`edgewatch poll: no EDGEWATCH_API_URL: polling ${where} (start \`npm start\` to watch one that moves)`);
  }
  try {
    const report = await pollSources({
      store,
      api: connection.api,
      rules: ruleSet.rules,
      now: dataClock(connection, () => new Date()),
      wallNow: () => new Date(),
      dryRun: options.dryRun,
      reportsBudget: config.reportsBudget,
      snapshotRetentionMs: config.snapshotRetentionMs,
      ...(ruleSet.health ? { health: ruleSet.health } : {}),
    });
    for (const failure of report.failures) options.err(`edgewatch poll: source ${failure.source} failed: ${failure.error}`);
    for (const notice of report.results.flatMap((result) => result.notices)) options.err(`edgewatch poll: ${notice}`);
    const elsewhere = report.results.filter((result) => result.ledElsewhere).map((result) => result.source);
    if (elsewhere.length > 0) options.err(`edgewatch poll: ${elsewhere.join(', ')}: polled by another process sharing the database (it leads them), not here`);
    const baselines = SOURCES.filter((source) => report.results.some((result) => result.source === source && result.baseline));
    if (baselines.length > 0) {
      const next = options.dryRun ? '--dry-run stored nothing, so the next poll is the baseline again' : 'the next poll fires on what changed since';
      options.err(`edgewatch poll: first poll of ${baselines.join(', ')}: a baseline, which stores what it sees and fires nothing (${next})`);
    }
    if (options.dryRun) {
      for (const alert of report.alerts) options.out(`would fire: ${consoleLine(alert)}`);
      if (report.alerts.length === 0) options.err('edgewatch poll: --dry-run: no alert would fire');
      return report.failures.length > 0 ? 1 : 0;
    }
    const send = createChannelSender({ config, templates, rules: ruleSet.rules, out: options.out });
    const explain = createExplainer({ api: connection.api, store, rules: ruleSet.rules, templates, dailyLimit: config.agentDailyLimit, now: () => new Date() });
    const delivery = await deliverNow(store, config, ruleSet, send, { explain });
    return report.failures.length > 0 || delivery.dead > 0 ? 1 : 0;
  } finally {
    await connection.close();
    await store.close();
  }
}

/** `digest --flush`: every pending digest sent now. */
export async function runDigestFlush(config: Config, options: Omit<PollOnceOptions, 'dryRun'>): Promise<number> {
  const { ruleSet, templates } = await requireRulesAndTemplates(config);
  for (const problem of ruleSet.problems) options.err(`${formatProblem(problem)} (rule skipped)`);
  const store = await openConfiguredStore(config);
  try {
    const send = createChannelSender({ config, templates, rules: ruleSet.rules, out: options.out });
    const report = await deliverNow(store, config, ruleSet, send, { flush: true });
    return report.dead > 0 || report.retrying > 0 ? 1 : 0;
  } finally {
    await store.close();
  }
}
