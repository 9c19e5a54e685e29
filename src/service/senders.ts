// Routes an outgoing message to its channel's adapter, rendered for that kind of channel.
import type { Config } from '../config.ts';
import type { Alert, DeliveryOutcome } from '../core/types.ts';
import type { Channel, Rule } from '../rules/index.ts';
// The channels' own modules, not notify/index.ts: the index also holds Slack's and email's, whose
// packages load with them (test/integration/lean-start.test.ts).
import { createConsoleNotifier } from '../notify/channels/console.ts';
import type { SlackMessage } from '../notify/channels/slack.ts';
import { WEBHOOK_TIMEOUT_MS } from '../notify/channels/timeouts.ts';
import { createWebhookNotifier } from '../notify/channels/webhook.ts';
import type { OutgoingMessage, SendToChannel } from '../notify/outbox.ts';
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
  type EmailContent,
  type SlackMessageContent,
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

/** Creates a value on first call and returns the same one after. */
function onFirstUse<T>(create: () => Promise<T>): () => Promise<T> {
  let created: Promise<T> | undefined;
  return () => (created ??= create());
}

/** A storm for a kind that does not group is sent as a digest of the same alerts. */
function asDigest(message: Extract<OutgoingMessage, { kind: 'group' }>): DigestMessage {
  const first = message.alerts[0]!;
  return { id: first.id, rule: first.rule, alerts: message.alerts, created_at: first.fired_at };
}

/** A message rendered for one channel: what the channel's transport sends. */
export type RenderedMessage =
  | { type: 'console'; lines: string[] }
  | { type: 'slack'; channel: string; content: SlackMessageContent; update?: SlackMessage['update']; replyIn?: SlackMessage['replyIn'] }
  | { type: 'email'; id: string; to: string[]; content: EmailContent; inReplyTo?: string }
  | { type: 'webhook'; url: string; id: string; body: string; secret?: string; headers: Record<string, string> };

/**
 * Renders a message for a channel (`render` prints this; the sender sends it). `templateOf` gives a
 * rule's `template:`. Throws when a template fails or runs past its time limit.
 */
export function renderForChannel(templates: TemplateSet, templateOf: (rule: string) => string | undefined, channel: Channel, message: OutgoingMessage): RenderedMessage {
  if (message.kind === 'notice') return renderNotice(templates, templateOf, channel, message);
  const single: Alert | DigestMessage = message.kind === 'alert' ? message.alert : message.kind === 'digest' ? message.digest : asDigest(message);
  // A rule's `template:` names its alerts' templates and its digests' (`<name>.digest.<kind>`).
  const template = message.kind === 'alert' ? templateOf(message.alert.rule) : message.kind === 'digest' ? templateOf(message.digest.rule) : undefined;
  switch (channel.type) {
    case 'console': {
      const lines =
        message.kind === 'group'
          ? message.alerts.flatMap((alert) => renderConsoleLines(templates, alert, templateOf(alert.rule)))
          : renderConsoleLines(templates, single, template);
      return { type: 'console', lines };
    }
    case 'slack': {
      const content =
        message.kind === 'alert'
          ? renderSlackMessage(templates, message.alert, template)
          : message.kind === 'group'
            ? renderSlackGroup(templates, message.alerts)
            : renderSlackDigest(templates, message.digest, template);
      // A generation run's later notices update its first message and reply in its thread.
      const thread = message.kind === 'alert' ? message.threadRef : undefined;
      if (thread) return { type: 'slack', channel: channel.channel, content, update: { ref: thread, ...content }, replyIn: thread };
      return { type: 'slack', channel: channel.channel, content };
    }
    case 'email':
      return { type: 'email', id: single.id, to: channel.to, content: renderEmail(templates, single, template) };
    case 'webhook': {
      const body = message.kind === 'alert' ? webhookBody(message.alert) : webhookDigestBody(single as DigestMessage);
      return { type: 'webhook', url: channel.url, id: single.id, body, ...(channel.secret === undefined ? {} : { secret: channel.secret }), headers: channel.headers };
    }
  }
}

/** A notice (resolved, health) rendered for the channel. */
function renderNotice(
  templates: TemplateSet,
  templateOf: (rule: string) => string | undefined,
  channel: Channel,
  message: Extract<OutgoingMessage, { kind: 'notice' }>,
): RenderedMessage {
  const { notice, replyTo } = message;
  const template = notice.kind === 'resolved' ? templateOf(notice.alert.rule) : undefined;
  switch (channel.type) {
    case 'console':
      return { type: 'console', lines: [noticeLine(notice)] };
    case 'slack': {
      const content = renderSlackNotice(notice);
      if (notice.kind === 'resolved' && replyTo) {
        // The alert's own message marked resolved in place, and the notice in its thread.
        const original = renderSlackMessage(templates, notice.alert, template, { resolvedAt: notice.resolved_at });
        return { type: 'slack', channel: channel.channel, content, update: { ref: replyTo, ...original }, replyIn: replyTo };
      }
      return { type: 'slack', channel: channel.channel, content };
    }
    case 'email': {
      const content = renderEmailNotice(templates, notice, template);
      return { type: 'email', id: notice.id, to: channel.to, content, ...(notice.kind === 'resolved' ? { inReplyTo: notice.alert.id } : {}) };
    }
    case 'webhook':
      return { type: 'webhook', url: channel.url, id: notice.id, body: webhookNoticeBody(notice), ...(channel.secret === undefined ? {} : { secret: channel.secret }), headers: channel.headers };
  }
}

export type ChannelTransportOptions = Pick<ChannelSenderOptions, 'config' | 'out' | 'webhookTimeoutMs' | 'now'>;

/** Sends rendered messages through each kind's transport, as configured; an unconfigured one fails for good. */
export function createChannelTransports(options: ChannelTransportOptions): (rendered: RenderedMessage) => Promise<DeliveryOutcome> {
  const { config } = options;
  const consoleNotifier = createConsoleNotifier({ write: options.out });
  // The Slack client and nodemailer are loaded when a message first goes their way, so that a
  // command or daemon that sends none (most send to one kind of channel) never loads them.
  const { slackToken: token, smtpUrl } = config;
  const slack = token
    ? onFirstUse(async () => (await import('../notify/channels/slack.ts')).createSlackNotifier({ token, apiUrl: config.slackApiUrl }))
    : undefined;
  const email = smtpUrl
    ? onFirstUse(async () => (await import('../notify/channels/email.ts')).createEmailNotifier({ smtpUrl, from: config.emailFrom }))
    : undefined;
  const webhook = createWebhookNotifier({ timeoutMs: options.webhookTimeoutMs ?? WEBHOOK_TIMEOUT_MS, now: options.now ?? (() => new Date()) });
  return async (rendered) => {
    switch (rendered.type) {
      case 'console':
        return consoleNotifier.send(rendered.lines);
      case 'slack':
        if (!slack) return unconfigured('SLACK_BOT_TOKEN');
        return (await slack()).send({ channel: rendered.channel, ...rendered.content, ...(rendered.update ? { update: rendered.update } : {}), ...(rendered.replyIn ? { replyIn: rendered.replyIn } : {}) });
      case 'email':
        if (!email) return unconfigured('SMTP_URL');
        return (await email()).send({ id: rendered.id, to: rendered.to, ...rendered.content, ...(rendered.inReplyTo === undefined ? {} : { inReplyTo: rendered.inReplyTo }) });
      case 'webhook':
        return webhook.send({ url: rendered.url, id: rendered.id, body: rendered.body, secret: rendered.secret, headers: rendered.headers });
    }
  };
}

export function createChannelSender(options: ChannelSenderOptions): SendToChannel {
  const { templates } = options;
  const templateOf = new Map(options.rules.map((rule) => [rule.name, rule.template]));
  const transmit = createChannelTransports(options);
  return async (channel: Channel, message: OutgoingMessage): Promise<DeliveryOutcome> => {
    let rendered: RenderedMessage;
    try {
      rendered = renderForChannel(templates, (rule) => templateOf.get(rule), channel, message);
    } catch (error) {
      // A template that fails, or runs past its time limit, fails the same way on every attempt.
      return { ok: false, retryable: false, error: `template ${describeRenderError(templates, error)}` };
    }
    return transmit(rendered);
  };
}
