// Structured logs (pino) on standard error, so standard output stays for command results and
// console alerts. Secrets are never passed to the logger; the redaction is a second guard.
import pino, { type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string, destination: pino.DestinationStream = pino.destination(2)): Logger {
  return pino(
    {
      level,
      base: undefined,
      redact: { paths: ['apiKey', '*.apiKey', 'token', '*.token', 'secret', '*.secret', 'authorization', '*.authorization'], censor: '[redacted]' },
    },
    destination,
  );
}
