import { dateTime } from '../core/format.ts';
import type { Alert, Notice } from '../core/types.ts';
import { escapeHtml } from './escape.ts';
import { renderAlert, renderDigest, type TemplateSet } from './templates.ts';
import { isDigest, type DigestMessage } from './types.ts';

export interface EmailContent {
  subject: string;
  html: string;
  text: string;
}

/** Subject, HTML and text parts of an alert or a digest email. */
export function renderEmail(set: TemplateSet, message: Alert | DigestMessage, templateName?: string): EmailContent {
  if (isDigest(message)) {
    return {
      subject: renderDigest(set, message, 'email_subject', templateName),
      html: renderDigest(set, message, 'email_html', templateName),
      text: renderDigest(set, message, 'email_text', templateName),
    };
  }
  return {
    subject: renderAlert(set, message, 'email_subject', templateName),
    html: renderAlert(set, message, 'email_html', templateName),
    text: renderAlert(set, message, 'email_text', templateName),
  };
}

/** A notice's email: a resolved alert (its subject `Resolved: ` and the alert's own), or a source's health. */
export function renderEmailNotice(set: TemplateSet, notice: Notice, templateName?: string): EmailContent {
  if (notice.kind === 'health') {
    const line = `edgewatch source ${notice.source} ${notice.status}${notice.error ? `: ${notice.error}` : ''}`;
    return { subject: line.slice(0, 200), text: `${line}\n\nAt ${dateTime(notice.at)}. Notice ${notice.id}\n`, html: `<p>${escapeHtml(line)}</p><p style="font-size:12px;color:#656d76;">At ${escapeHtml(dateTime(notice.at))}. Notice ${escapeHtml(notice.id)}</p>` };
  }
  const subject = `Resolved: ${renderAlert(set, notice.alert, 'email_subject', templateName)}`;
  const when = dateTime(notice.resolved_at);
  const text = `${notice.summary}\n\nResolved ${when}; alert ${notice.alert.id} fired ${dateTime(notice.alert.fired_at)}.\nNotice ${notice.id}\n`;
  const html = `<p style="font-weight:600;">${escapeHtml(notice.summary)}</p><p style="font-size:12px;color:#656d76;">Resolved ${escapeHtml(when)}; alert ${escapeHtml(notice.alert.id)} fired ${escapeHtml(dateTime(notice.alert.fired_at))}. Notice ${escapeHtml(notice.id)}</p>`;
  return { subject, text, html };
}
