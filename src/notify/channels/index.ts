export type { Notifier } from './types.ts';
export type { SlackMessage, SlackNotifierOptions, SlackPoster } from './slack.ts';
export { createSlackClient, createSlackNotifier, slackOutcome } from './slack.ts';
export type { EmailMessage, EmailNotifierOptions, MailTransport } from './email.ts';
export { createEmailNotifier, messageIdFor, smtpOutcome } from './email.ts';
export type { WebhookMessage, WebhookNotifierOptions } from './webhook.ts';
export { createWebhookNotifier, webhookHeaders } from './webhook.ts';
export type { ConsoleNotifierOptions } from './console.ts';
export { createConsoleNotifier } from './console.ts';
