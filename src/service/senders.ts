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
} from '../notify/index.ts';
import {
  describeRenderError,
  noticeLine,
  renderConsoleLines,
  renderEmail,
  renderEmailNotice,
  renderSlackDigest,
  renderSlackGroup,
  renderSlackMessage,
  renderSlackNotice,
  webhookBody,
  webhookDigestBody,
  webhookNoticeBody,
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
  const webhook = createWebhookNotifier({ timeoutMs: options.webhookTimeoutMs ?? 10_000, now: options.now ?? (() => new Date()) });

  /** A notice (resolved, health) for the channel; the returned function sends it. */
  function prepareNotice(channel: Channel, message: Extract<OutgoingMessage, { kind: 'notice' }>): () => Promise<DeliveryOutcome> {
    const { notice, replyTo } = message;
    const template = notice.kind === 'resolved' ? templateOf.get(notice.alert.rule) : undefined;
    switch (channel.type) {
      case 'console': {
        const line = noticeLine(notice);
        return () => consoleNotifier.send([line]);
      }
      case 'slack': {
        if (!slack) return async () => unconfigured('SLACK_BOT_TOKEN');
        const content = renderSlackNotice(notice);
        if (notice.kind === 'resolved' && replyTo) {
          // The alert's own message marked resolved in place, and the notice in its thread.
          const original = renderSlackMessage(templates, notice.alert, template, { resolvedAt: notice.resolved_at });
          return () => slack.send({ channel: channel.channel, ...content, update: { ref: replyTo, ...original }, replyIn: replyTo });
        }
        return () => slack.send({ channel: channel.channel, ...content });
      }
      case 'email': {
        if (!email) return async () => unconfigured('SMTP_URL');
        const content = renderEmailNotice(templates, notice, template);
        const inReplyTo = notice.kind === 'resolved' ? notice.alert.id : undefined;
        return () => email.send({ id: notice.id, to: channel.to, ...content, ...(inReplyTo ? { inReplyTo } : {}) });
      }
      case 'webhook': {
        const body = webhookNoticeBody(notice);
        return () => webhook.send({ url: channel.url, id: notice.id, body, secret: channel.secret, headers: channel.headers });
      }
    }
  }

  /** Renders the message for the channel now; the returned function sends it. */
  function prepare(channel: Channel, message: OutgoingMessage): () => Promise<DeliveryOutcome> {
    if (message.kind === 'notice') return prepareNotice(channel, message);
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
        // A generation run's later notices update its first message and reply in its thread.
        const thread = message.kind === 'alert' ? message.threadRef : undefined;
        if (thread) return () => slack.send({ channel: channel.channel, ...content, update: { ref: thread, ...content }, replyIn: thread });
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
