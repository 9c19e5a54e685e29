// Standard output: one line per alert naming the rule and the entity.
import type { Alert } from '../../core/types.ts';
import { consoleLine } from '../../render/console-line.ts';
import { isDigest, type DigestMessage } from '../../render/types.ts';
import { delivered, errorMessage, failed } from './outcome.ts';
import type { Notifier } from './types.ts';

export interface ConsoleNotifierOptions {
  write?: (line: string) => void;
  /** How one alert reads; `[severity] rule entity: summary` by default. */
  format?: (alert: Alert) => string;
}

export function createConsoleNotifier(options: ConsoleNotifierOptions = {}): Notifier<Alert | DigestMessage> {
  const write = options.write ?? ((line: string) => void process.stdout.write(`${line}\n`));
  const format = options.format ?? consoleLine;
  return {
    async send(message) {
      try {
        for (const alert of isDigest(message) ? message.alerts : [message]) write(format(alert));
        return delivered;
      } catch (error) {
        return failed(true, `console: ${errorMessage(error)}`);
      }
    },
  };
}
