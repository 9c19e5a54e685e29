export type { DigestMessage, EscapeMode, TemplateKind } from './types.ts';
export { TEMPLATE_KINDS, isDigest } from './types.ts';
export type { CompileResult, TemplateSet } from './templates.ts';
export {
  compileTemplates,
  describeRenderError,
  digestRenderLimitMs,
  loadTemplates,
  renderAlert,
  renderDigest,
  RENDER_LIMIT_MS,
  SHIPPED_TEMPLATES_DIR,
} from './templates.ts';
export { sampleAlert, sampleDigest } from './sample.ts';
export type { AlertView, ChangeLine, DigestView, Fact } from './view.ts';
export { alertView, digestView } from './view.ts';
export type { SlackMessageContent } from './slack.ts';
export { SLACK_GROUP_LIMIT, renderSlackDigest, renderSlackGroup, renderSlackMessage } from './slack.ts';
export type { EmailContent } from './email.ts';
export { renderEmail } from './email.ts';
export type { WebhookAlertPayload, WebhookDigestPayload } from './webhook.ts';
export { webhookAlertPayload, webhookBody, webhookDigestBody } from './webhook.ts';
export { consoleLine, renderConsoleLines } from './console-line.ts';
export { escapeHtml, escapeSlack, htmlToText, sanitizeRichText, stripControl } from './escape.ts';
