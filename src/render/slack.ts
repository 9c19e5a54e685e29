// Slack messages: `text` (the rendered template, also the notification fallback) and Block Kit blocks.
import type { KnownBlock } from '@slack/web-api';
import type { Alert, Notice } from '../core/types.ts';
import { escapeSlack } from './escape.ts';
import { renderAlert, renderDigest, type TemplateSet } from './templates.ts';
import type { DigestMessage } from './types.ts';
import { alertView } from './view.ts';
import { dateTime } from '../core/format.ts';

export interface SlackMessageContent {
  text: string;
  blocks: KnownBlock[];
}

// Block Kit limits.
const MAX_BLOCKS = 50;
const HEADER_CHARS = 150;
const SECTION_CHARS = 3000;
const FIELD_CHARS = 2000;
const MAX_FIELDS = 10;
/** Alerts listed one by one in a group message before "... and K more". */
export const SLACK_GROUP_LIMIT = 20;

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

// Clip before escaping would leave a broken entity; clip the raw text, then escape, then clip.
function safe(text: string, max: number): string {
  return clip(escapeSlack(clip(text, max)), max);
}

function header(text: string): KnownBlock {
  return { type: 'header', text: { type: 'plain_text', text: safe(text, HEADER_CHARS), emoji: true } };
}

function section(mrkdwn: string): KnownBlock {
  return { type: 'section', text: { type: 'mrkdwn', text: clip(mrkdwn, SECTION_CHARS) } };
}

function context(mrkdwn: string): KnownBlock {
  return { type: 'context', elements: [{ type: 'mrkdwn', text: clip(mrkdwn, SECTION_CHARS) }] };
}

/** A link in Slack mrkdwn: `<url|text>`, with the characters that would end it escaped. */
function slackLink(url: string, text: string): string {
  return `<${url.replace(/[<>|]/g, encodeURIComponent)}|${escapeSlack(text).replace(/\|/g, '¦')}>`;
}

/** The agent's answer: its text and its numbered citations as links. */
function explanationSection(explanation: NonNullable<ReturnType<typeof alertView>['explanation']>): KnownBlock {
  const links = explanation.citations.map((c) => `[${c.order}] ${slackLink(c.url, c.name)}`);
  return section([`*Explanation* (${escapeSlack(explanation.agent)})`, escapeSlack(explanation.text), ...links].join('\n'));
}

/**
 * One alert: header with the title, the rendered summary, the facts as fields, the agent's
 * explanation when there is one, and who fired it. `resolved` marks it so (the original message,
 * updated in place when its alert resolves).
 */
export function renderSlackMessage(set: TemplateSet, alert: Alert, templateName?: string, options: { resolvedAt?: string } = {}): SlackMessageContent {
  const view = alertView(alert);
  const rendered = renderAlert(set, alert, 'slack', templateName);
  const resolved = options.resolvedAt !== undefined;
  const text = resolved ? `✅ Resolved: ${rendered}` : rendered;
  const blocks: KnownBlock[] = [header(`${resolved ? '✅ Resolved: ' : `${view.severity_icon} `}${view.title}`), section(text)];
  const fields = view.facts.slice(0, MAX_FIELDS).map((f) => ({
    type: 'mrkdwn' as const,
    text: clip(`*${escapeSlack(f.label)}*\n${escapeSlack(f.value)}`, FIELD_CHARS),
  }));
  if (fields.length > 0) blocks.push({ type: 'section', fields });
  if (view.explanation) blocks.push(explanationSection(view.explanation));
  const resolvedNote = resolved ? ` · resolved ${escapeSlack(dateTime(options.resolvedAt!))}` : '';
  blocks.push(context(`${escapeSlack(view.rule)} · ${escapeSlack(view.entity)} · ${escapeSlack(view.fired_at)}${resolvedNote} · id ${escapeSlack(view.id)}`));
  return { text, blocks };
}

/** A notice's own message: a resolved alert's thread reply, or a source's health. */
export function renderSlackNotice(notice: Notice): SlackMessageContent {
  if (notice.kind === 'health') {
    const icon = notice.status === 'degraded' ? '🔴' : '🟢';
    const line = `${icon} edgewatch source ${notice.source} ${notice.status}${notice.error ? `: ${notice.error}` : ''}`;
    return { text: clip(escapeSlack(line), SECTION_CHARS), blocks: [section(escapeSlack(line)), context(`notice ${escapeSlack(notice.id)}`)] };
  }
  const text = `✅ Resolved: ${escapeSlack(notice.summary)}`;
  return { text: clip(text, SECTION_CHARS), blocks: [section(text), context(`${escapeSlack(notice.alert.rule)} · resolved ${escapeSlack(dateTime(notice.resolved_at))} · id ${escapeSlack(notice.id)} (alert ${escapeSlack(notice.alert.id)})`)] };
}

/** Many alerts in one message (an alert storm): the first `limit` listed, then "... and K more". */
export function renderSlackGroup(set: TemplateSet, alerts: Alert[], limit = SLACK_GROUP_LIMIT): SlackMessageContent {
  // header + listed sections + the "more" context must stay within Slack's 50 blocks.
  const shown = Math.max(0, Math.min(limit, MAX_BLOCKS - 2, alerts.length));
  const views = alerts.map(alertView);
  const rest = alerts.length - shown;
  const worst = views.some((v) => v.severity === 'critical') ? '🚨' : views.some((v) => v.severity === 'warning') ? '⚠️' : 'ℹ️';
  const title = `${alerts.length} edgewatch alert${alerts.length === 1 ? '' : 's'}`;
  const blocks: KnownBlock[] = [header(`${worst} ${title}`)];
  const lines: string[] = [];
  for (const view of views.slice(0, shown)) {
    const line = `${view.severity_icon} *${escapeSlack(view.title)}*\n${escapeSlack(view.summary)}\n_${escapeSlack(view.rule)} · ${escapeSlack(view.entity)}_`;
    blocks.push(section(line));
    lines.push(`• ${escapeSlack(view.rule)} ${escapeSlack(view.entity)}: ${escapeSlack(view.summary)}`);
  }
  if (rest > 0) {
    blocks.push(context(`... and ${rest} more`));
    lines.push(`... and ${rest} more`);
  }
  return { text: clip(`${escapeSlack(title)}\n${lines.join('\n')}`, SECTION_CHARS), blocks };
}

/** A digest in one Slack message: the rendered digest template as text, alerts listed as in a group. */
export function renderSlackDigest(set: TemplateSet, digest: DigestMessage, templateName?: string, limit = SLACK_GROUP_LIMIT): SlackMessageContent {
  const text = renderDigest(set, digest, 'slack', templateName);
  const shown = Math.max(0, Math.min(limit, MAX_BLOCKS - 2, digest.alerts.length));
  const views = digest.alerts.map(alertView);
  const count = digest.alerts.length;
  const blocks: KnownBlock[] = [header(`Digest: ${digest.rule} (${count} alert${count === 1 ? '' : 's'})`)];
  for (const view of views.slice(0, shown)) blocks.push(section(`${view.severity_icon} ${escapeSlack(view.line)}`));
  if (count > shown) blocks.push(context(`... and ${count - shown} more`));
  return { text: clip(text, SECTION_CHARS), blocks };
}
