// Cited explanations (`explain`): before an alert's first delivery, the rule's agent is asked the
// rule's question about it. Bounded by the rule's timeout and the day's question limit; a failure
// gives no explanation and never holds or fails the delivery.
import { setTimeout as sleep } from 'node:timers/promises';
import type { ApiClient } from '../api/index.ts';
import { describeError } from '../core/errors.ts';
import type { Alert, Explanation } from '../core/types.ts';
import { renderQuestion, type TemplateSet } from '../render/index.ts';
import type { Rule } from '../rules/index.ts';
import { takeAgentQuestion, type Store } from '../store/index.ts';
import type { Logger } from './logger.ts';

export interface ExplainerOptions {
  api: Pick<ApiClient, 'askAgent'>;
  store: Store;
  rules: readonly Rule[];
  templates: TemplateSet;
  /** Questions per UTC day, all rules together (EDGEWATCH_AGENT_DAILY_LIMIT). */
  dailyLimit: number;
  now: () => Date;
  log?: Pick<Logger, 'warn'>;
}

/** The outbox's `explain`: undefined for an alert whose rule has no `explain`. */
export function createExplainer(options: ExplainerOptions): (alert: Alert) => Promise<Explanation | null> | undefined {
  const { api, store, templates, log } = options;
  const byRule = new Map(options.rules.flatMap((rule) => (rule.explain ? [[rule.name, rule.explain] as const] : [])));
  return (alert) => {
    const explain = byRule.get(alert.rule);
    if (!explain) return undefined;
    const fail = (why: string): null => {
      log?.warn({ rule: alert.rule, alert: alert.id, agent: explain.agent }, `no explanation for alert ${alert.id}: ${why}; it goes without`);
      return null;
    };
    return (async () => {
      let input: string;
      try {
        input = renderQuestion(templates, explain.ask, alert);
      } catch (error) {
        return fail(`its question (explain.ask) failed to render: ${describeError(error)}`);
      }
      if (!(await takeAgentQuestion(store, options.now(), options.dailyLimit))) {
        return fail(`EDGEWATCH_AGENT_DAILY_LIMIT (${options.dailyLimit} questions a UTC day) is reached`);
      }
      // The client's own limit ends the request; this one also bounds everything around it.
      const timedOut = new AbortController();
      try {
        const answer = await Promise.race([
          api.askAgent({ agent: explain.agent, input, timeoutMs: explain.timeoutMs }),
          sleep(explain.timeoutMs, undefined, { signal: timedOut.signal }).then(
            () => undefined,
            () => undefined,
          ),
        ]);
        if (answer === undefined) return fail(`the agent did not answer within ${explain.timeoutMs / 1000} s`);
        return { agent: explain.agent, text: answer.text, citations: answer.citations };
      } catch (error) {
        return fail(describeError(error));
      } finally {
        timedOut.abort();
      }
    })();
  };
}
