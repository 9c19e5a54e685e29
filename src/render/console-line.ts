import type { Alert } from '../core/types.ts';

/** One line for standard output: `[severity] rule entity: summary` (line breaks in API text flattened). */
export function consoleLine(alert: Alert): string {
  return `[${alert.severity}] ${alert.rule} ${alert.entity}: ${alert.summary}`.replace(/[\r\n]+/g, ' ');
}
