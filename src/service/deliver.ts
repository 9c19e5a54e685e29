// One delivery pass, shared by the daemon, `poll --once` and `digest --flush`: the digest batches
// whose time has come are closed, then everything due is sent.
import type { Config } from '../config.ts';
import { closeDueBatches, deliverDue, silenceUnsent, type DeliverOptions, type DeliverReport, type SendToChannel } from '../notify/index.ts';
import type { RuleSet } from '../rules/index.ts';
import type { Store } from '../store/index.ts';
import { GROUPING_KINDS } from './senders.ts';

export interface DeliverNowOptions {
  /** Close every open digest batch, due or not. */
  flush?: boolean;
  onOutcome?: DeliverOptions['onOutcome'];
  /** For overlapping passes of the daemon: see DeliverOptions. */
  busyChannels?: DeliverOptions['busyChannels'];
  stopping?: DeliverOptions['stopping'];
  /** The clock of the pass: which digests and retries are due, and the send times. */
  now?: () => Date;
  /** Asks the agent before an alert's first delivery (rules with `explain`): see createExplainer. */
  explain?: DeliverOptions['explain'];
}

/** `send` comes from createChannelSender, built once per rule set rather than per pass. */
export async function deliverNow(
  store: Store,
  config: Config,
  ruleSet: RuleSet,
  send: SendToChannel,
  options: DeliverNowOptions = {},
): Promise<DeliverReport> {
  const now = options.now ?? (() => new Date());
  // Silences first: a silence made since the last pass mutes what has not been sent yet.
  await silenceUnsent(store, now());
  await closeDueBatches(store, new Map(ruleSet.rules.map((rule) => [rule.name, rule])), now(), options);
  return deliverDue(store, {
    channels: ruleSet.channels,
    send,
    now,
    retry: { attempts: config.deliveryAttempts, baseMs: 30_000, maxMs: 3_600_000 },
    groupKinds: GROUPING_KINDS,
    groupAbove: config.slackGroupAbove,
    onOutcome: options.onOutcome,
    busyChannels: options.busyChannels,
    stopping: options.stopping,
    explain: options.explain,
  });
}
