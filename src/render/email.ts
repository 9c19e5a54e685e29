import type { Alert } from '../core/types.ts';
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
