// `poll --once`: one cycle of the same code the daemon runs, then the deliveries that are due.
import type { Config } from '../config.ts';
import { formatProblem } from '../rules/index.ts';
import { consoleLine } from '../render/index.ts';
import { deliverDue } from '../notify/index.ts';
import { connectApi, loadRulesAndTemplates, openConfiguredStore } from './app.ts';
import { pollSources } from './cycle.ts';
import { createChannelSender } from './senders.ts';

export interface PollOnceOptions {
  dryRun: boolean;
  out: (line: string) => void;
  err: (line: string) => void;
}

export async function runPollOnce(config: Config, options: PollOnceOptions): Promise<number> {
  const { ruleSet, templates } = await loadRulesAndTemplates(config);
  for (const problem of ruleSet.problems) options.err(`${formatProblem(problem)} (rule skipped)`);
  const store = await openConfiguredStore(config);
  const connection = await connectApi(config, { sandboxSpeed: 0 });
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
    const delivery = await deliverDue(store, {
      channels: ruleSet.channels,
      send: createChannelSender({ config, templates, rules: ruleSet.rules, out: options.out }),
      now: () => new Date(),
      retry: { attempts: config.deliveryAttempts, baseMs: 30_000, maxMs: 3_600_000 },
    });
    return report.failures.length > 0 || delivery.dead > 0 ? 1 : 0;
  } finally {
    await connection.close();
    await store.close();
  }
}
