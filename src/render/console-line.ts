// Standard output: one line per alert that names at least its rule and entity, with nothing from
// the API that a terminal would act on (escape sequences, control characters, line breaks).
import type { Alert, Notice } from '../core/types.ts';
import { stripControl } from './escape.ts';
import { renderAlert, renderDigest, type TemplateSet } from './templates.ts';
import { isDigest, type DigestMessage } from './types.ts';

/** `[severity] rule entity: summary`, the line of `--dry-run` (and of the default text template). */
export function consoleLine(alert: Alert): string {
  return stripControl(`[${alert.severity}] ${alert.rule} ${alert.entity}: ${alert.summary}`);
}

/** A rendered alert on one line; prefixed with its rule and entity when the template names neither. */
function alertLine(text: string, alert: Alert): string {
  const line = stripControl(text).trim();
  const entity = stripControl(alert.entity);
  return line.includes(alert.rule) && line.includes(entity) ? line : `${alert.rule} ${entity}: ${line}`.trimEnd();
}

/**
 * The console lines of an alert (its `text` template on one line) or of a digest (the lines of
 * its `digest.text` template, by default one per alert).
 */
export function renderConsoleLines(set: TemplateSet, message: Alert | DigestMessage, templateName?: string): string[] {
  if (!isDigest(message)) return [alertLine(renderAlert(set, message, 'text', templateName), message)];
  return renderDigest(set, message, 'text', templateName)
    .split(/\r\n|\n|\r/)
    .map((line) => stripControl(line).trim())
    .filter((line) => line !== '');
}

/** A notice on one line: `[resolved] rule entity: summary`, or `[health] source degraded: error`. */
export function noticeLine(notice: Notice): string {
  if (notice.kind === 'health') return stripControl(`[health] source ${notice.source} ${notice.status}${notice.error ? `: ${notice.error}` : ''}`);
  return stripControl(`[resolved] ${notice.alert.rule} ${notice.alert.entity}: ${notice.summary}`);
}
