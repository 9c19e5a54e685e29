// Standard output: the lines rendered for the console (render/console-line.ts), one per alert.
import { errorMessage } from '../../core/errors.ts';
import { delivered, failed } from './outcome.ts';
import type { Notifier } from './types.ts';

export interface ConsoleNotifierOptions {
  write?: (line: string) => void;
}

export function createConsoleNotifier(options: ConsoleNotifierOptions = {}): Notifier<string[]> {
  const write = options.write ?? ((line: string) => void process.stdout.write(`${line}\n`));
  return {
    async send(lines) {
      try {
        for (const line of lines) write(line);
        return delivered;
      } catch (error) {
        return failed(true, `console: ${errorMessage(error)}`);
      }
    },
  };
}
