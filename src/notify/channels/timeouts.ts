// How long one send of each channel kind may take. Kept apart from the channels' modules, which
// load the Slack client and nodemailer, so that the outbox can size its leases without loading them.

/** How long a webhook request may take, unless the notifier is given another timeout. */
export const WEBHOOK_TIMEOUT_MS = 10_000;

/** How long one Slack Web API call may take, unless the client is given another timeout. */
export const SLACK_TIMEOUT_MS = 10_000;

/**
 * Timeouts of every SMTP connection (nodemailer's own wait up to 2 and 10 minutes): a server that
 * accepts and then goes silent fails the attempt, which is retried later, within half a minute.
 * A URL's own `?connectionTimeout=...` parameters still take precedence.
 */
export const SMTP_TIMEOUTS = { connectionTimeout: 20_000, greetingTimeout: 20_000, socketTimeout: 30_000 } as const;
