import type { Alert } from '../core/types.ts';

/** A batch of alerts of one rule, sent as one message. */
export interface DigestMessage {
  id: string;
  rule: string;
  alerts: Alert[];
  created_at: string;
}

export const TEMPLATE_KINDS = ['slack', 'email_subject', 'email_html', 'email_text', 'text'] as const;
export type TemplateKind = (typeof TEMPLATE_KINDS)[number];

export function isTemplateKind(value: unknown): value is TemplateKind {
  return (TEMPLATE_KINDS as readonly unknown[]).includes(value);
}

/** How Liquid output is escaped for a kind: HTML entities, Slack mrkdwn control characters, or nothing. */
export type EscapeMode = 'html' | 'slack' | 'plain';

export const ESCAPE_BY_KIND: Record<TemplateKind, EscapeMode> = {
  slack: 'slack',
  email_subject: 'plain',
  email_html: 'html',
  email_text: 'plain',
  text: 'plain',
};

export function isDigest(message: Alert | DigestMessage): message is DigestMessage {
  return Array.isArray((message as DigestMessage).alerts);
}
