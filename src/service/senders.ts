// Routes an outgoing message to its channel's adapter, rendered for that kind of channel.
import type { Config } from '../config.ts';
import type { Alert, DeliveryOutcome } from '../core/types.ts';
import type { Channel, Rule } from '../rules/index.ts';
import {
  createConsoleNotifier,
  createEmailNotifier,
  createSlackNotifier,
  createWebhookNotifier,
  type OutgoingMessage,
  type SendToChannel,
  WEBHOOK_TIMEOUT_MS,
} from '../notify/index.ts';
import {
  describeRenderError,
  renderConsoleLines,
  renderEmail,
  renderSlackDigest,
  renderSlackGroup,
  renderSlackMessage,
  webhookBody,
  webhookDigestBody,
  type DigestMessage,
  type TemplateSet,
} from '../render/index.ts';

/** Channel kinds whose storms go as one message per cycle. */
export const GROUPING_KINDS: ReadonlySet<Channel['type']> = new Set(['slack']);

export interface ChannelSenderOptions {
  config: Pick<Config, 'slackToken' | 'slackApiUrl' | 'smtpUrl' | 'emailFrom'>;
  templates: TemplateSet;
  rules: readonly Rule[];
  /** Where console channels print. */
  out: (line: string) => void;
  webhookTimeoutMs?: number;
  /** The send time, for webhook timestamps and signatures; the outbox's clock. */
  now?: () => Date;
}

function unconfigured(what: string): DeliveryOutcome {
  return { ok: false, retryable: false, error: `${what} is not configured` };
}

/** A storm for a kind that does not group is sent as a digest of the same alerts. */
function asDigest(message: Extract<OutgoingMessage, { kind: 'group' }>): DigestMessage {
  const first = message.alerts[0]!;
  return { id: first.id, rule: first.rule, alerts: message.alerts, created_at: first.fired_at };
}

export function createChannelSender(options: ChannelSenderOptions): SendToChannel {
  const { config, templates } = options;
  const templateOf = new Map(options.rules.map((rule) => [rule.name, rule.template]));
  const consoleNotifier = createConsoleNotifier({ write: options.out });
  const slack = config.slackToken ? createSlackNotifier({ token: config.slackToken, apiUrl: config.slackApiUrl }) : undefined;
  const email = config.smtpUrl ? createEmailNotifier({ smtpUrl: config.smtpUrl, from: config.emailFrom }) : undefined;
  const webhook = createWebhookNotifier({ timeoutMs: options.webhookTimeoutMs ?? WEBHOOK_TIMEOUT_MS, now: options.now ?? (() => new Date()) });

  /** Renders the message for the channel now; the returned function sends it. */
  function prepare(channel: Channel, message: OutgoingMessage): () => Promise<DeliveryOutcome> {
    const single: Alert | DigestMessage =
      message.kind === 'alert' ? message.alert : message.kind === 'digest' ? message.digest : asDigest(message);
    // A rule's `template:` names its alerts' templates and its digests' (`<name>.digest.<kind>`).
    const template =
      message.kind === 'alert' ? templateOf.get(message.alert.rule) : message.kind === 'digest' ? templateOf.get(message.digest.rule) : undefined;
    switch (channel.type) {
      case 'console': {
        const lines =
          message.kind === 'group'
            ? message.alerts.flatMap((alert) => renderConsoleLines(templates, alert, templateOf.get(alert.rule)))
            : renderConsoleLines(templates, single, template);
        return () => consoleNotifier.send(lines);
      }
      case 'slack': {
        if (!slack) return async () => unconfigured('SLACK_BOT_TOKEN');
        const content =
          message.kind === 'alert'
            ? renderSlackMessage(templates, message.alert, template)
            : message.kind === 'group'
              ? renderSlackGroup(templates, message.alerts)
              : renderSlackDigest(templates, message.digest, template);
        return () => slack.send({ channel: channel.channel, ...content });
      }
      case 'email': {
        if (!email) return async () => unconfigured('SMTP_URL');
        const content = renderEmail(templates, single, template);
        return () => email.send({ id: single.id, to: channel.to, ...content });
      }
      case 'webhook': {
        const body = message.kind === 'alert' ? webhookBody(message.alert) : webhookDigestBody(single as DigestMessage);
        return () => webhook.send({ url: channel.url, id: single.id, body, secret: channel.secret, headers: channel.headers });
      }
    }
  }

  return async (channel: Channel, message: OutgoingMessage): Promise<DeliveryOutcome> => {
    let send: () => Promise<DeliveryOutcome>;
    try {
      send = prepare(channel, message);
    } catch (error) {
      // A template that fails, or runs past its time limit, fails the same way on every attempt.
      return { ok: false, retryable: false, error: `template ${describeRenderError(templates, error)}` };
    }
    return send();
  };
}
