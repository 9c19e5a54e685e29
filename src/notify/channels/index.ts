export type { Notifier } from './types.ts';
export type { SlackMessage, SlackNotifierOptions, SlackPoster } from './slack.ts';
export { createSlackClient, createSlackNotifier, slackOutcome, SLACK_TIMEOUT_MS } from './slack.ts';
export type { EmailMessage, EmailNotifierOptions, MailTransport } from './email.ts';
export { createEmailNotifier, messageIdFor, smtpOutcome, SMTP_TIMEOUTS } from './email.ts';
export type { WebhookMessage, WebhookNotifierOptions } from './webhook.ts';
export { createWebhookNotifier, webhookHeaders, WEBHOOK_TIMEOUT_MS } from './webhook.ts';
export type { ConsoleNotifierOptions } from './console.ts';
export { createConsoleNotifier } from './console.ts';
