// Structured logs (pino) on standard error, so standard output stays for command results and
// console alerts: JSON lines for machines, readable lines when a person watches a terminal.
// Secrets are never passed to the logger; the redaction is a second guard.
import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';

export type { Logger };

function defaultDestination(): pino.DestinationStream {
  if (process.stderr.isTTY) return pretty({ destination: 2, sync: true, colorize: true, singleLine: true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname' });
  return pino.destination(2);
}

export function createLogger(level: string, destination: pino.DestinationStream = defaultDestination()): Logger {
  return pino(
    {
      level,
      base: undefined,
      redact: { paths: ['apiKey', '*.apiKey', 'token', '*.token', 'secret', '*.secret', 'authorization', '*.authorization'], censor: '[redacted]' },
    },
    destination,
  );
}
