// Reads the environment once, validates it and freezes it. Nothing else reads process.env,
// except rule files' `${NAME}` substitution, which is handed `env` from here.
import { z } from 'zod';
import { parseDuration } from './core/duration.ts';
import { EdgewatchError } from './core/errors.ts';

const duration = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((text, ctx) => {
      const ms = parseDuration(text);
      if (ms === undefined) {
        ctx.addIssue({ code: 'custom', message: `not a duration (write 30s, 15m, 2h, 1d): ${text}` });
        return z.NEVER;
      }
      return ms;
    });

const EnvSchema = z.object({
  EDGEWATCH_API_URL: z.url().optional(),
  EDGEWATCH_API_KEY: z.string().min(1).optional(),
  EDGEWATCH_DB: z.string().default('./data/edgewatch.db'),
  EDGEWATCH_RULES: z.string().default('./rules'),
  EDGEWATCH_TEMPLATES: z.string().default('./templates'),
  EDGEWATCH_PORT: z.coerce.number().int().min(0).max(65535).default(8787),
  SLACK_BOT_TOKEN: z.string().min(1).optional(),
  SLACK_API_URL: z.url().optional(),
  SMTP_URL: z.string().regex(/^smtps?:\/\//, 'must start with smtp:// or smtps://').optional(),
  EMAIL_FROM: z.string().default('edgewatch@localhost'),
  EDGEWATCH_POLL_EVENTS: z.string().optional(),
  EDGEWATCH_POLL_KPIS: z.string().optional(),
  EDGEWATCH_POLL_REPORTS: z.string().optional(),
  EDGEWATCH_POLL_RUNS: z.string().optional(),
  EDGEWATCH_DELIVERY_ATTEMPTS: z.coerce.number().int().min(1).default(10),
  EDGEWATCH_LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
  /** Trust scorecard requests allowed per reports poll. */
  EDGEWATCH_REPORTS_BUDGET: z.coerce.number().int().min(1).default(50),
  /** More alerts than this for one Slack channel in one delivery pass go as one grouped message. */
  EDGEWATCH_SLACK_GROUP_ABOVE: z.coerce.number().int().min(1).default(10),
  /** How long snapshot history is kept (latest snapshots are kept forever). */
  EDGEWATCH_SNAPSHOT_RETENTION: duration('30d'),
});

/**
 * The variables that hold edgewatch's own credentials (a new secret variable belongs here).
 * Rule files cannot expand them with `${NAME}`: a rule could send them to any URL or header.
 * EDGEWATCH_DB counts: as a PostgreSQL URL it holds a password.
 */
export const CREDENTIAL_VARIABLES = ['EDGEWATCH_API_KEY', 'SLACK_BOT_TOKEN', 'SMTP_URL', 'EDGEWATCH_DB'] as const satisfies ReadonlyArray<
  keyof typeof EnvSchema.shape
>;

export interface PollIntervals {
  events?: number;
  kpis?: number;
  reports?: number;
  runs?: number;
}

export interface Config {
  apiUrl: string | undefined;
  apiKey: string | undefined;
  dbPath: string;
  rulesDir: string;
  templatesDir: string;
  port: number;
  slackToken: string | undefined;
  slackApiUrl: string | undefined;
  smtpUrl: string | undefined;
  emailFrom: string;
  /** Poll intervals set in the environment; unset ones take the defaults of where we run. */
  pollIntervals: PollIntervals;
  deliveryAttempts: number;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  reportsBudget: number;
  slackGroupAbove: number;
  snapshotRetentionMs: number;
  /** The environment as read, for `${NAME}` in rule files. */
  env: Readonly<Record<string, string | undefined>>;
}

function pollInterval(name: string, text: string | undefined): number | undefined {
  if (text === undefined || text === '') return undefined;
  const ms = parseDuration(text);
  if (ms === undefined) throw new EdgewatchError('CONFIG_INVALID', `${name}: not a duration (write 30s, 15m, 2h, 1d): ${text}`);
  return ms;
}

/** Validates an environment into a frozen Config; throws CONFIG_INVALID naming the variable. */
export function readConfig(env: Record<string, string | undefined> = process.env): Config {
  // Empty values count as unset, as in most .env loaders.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = EnvSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new EdgewatchError('CONFIG_INVALID', `invalid environment:\n  ${lines.join('\n  ')}`);
  }
  const e = parsed.data;
  return Object.freeze({
    apiUrl: e.EDGEWATCH_API_URL?.replace(/\/+$/, ''),
    apiKey: e.EDGEWATCH_API_KEY,
    dbPath: e.EDGEWATCH_DB,
    rulesDir: e.EDGEWATCH_RULES,
    templatesDir: e.EDGEWATCH_TEMPLATES,
    port: e.EDGEWATCH_PORT,
    slackToken: e.SLACK_BOT_TOKEN,
    slackApiUrl: e.SLACK_API_URL,
    smtpUrl: e.SMTP_URL,
    emailFrom: e.EMAIL_FROM,
    pollIntervals: Object.freeze({
      events: pollInterval('EDGEWATCH_POLL_EVENTS', e.EDGEWATCH_POLL_EVENTS),
      kpis: pollInterval('EDGEWATCH_POLL_KPIS', e.EDGEWATCH_POLL_KPIS),
      reports: pollInterval('EDGEWATCH_POLL_REPORTS', e.EDGEWATCH_POLL_REPORTS),
      runs: pollInterval('EDGEWATCH_POLL_RUNS', e.EDGEWATCH_POLL_RUNS),
    }),
    deliveryAttempts: e.EDGEWATCH_DELIVERY_ATTEMPTS,
    logLevel: e.EDGEWATCH_LOG_LEVEL,
    reportsBudget: e.EDGEWATCH_REPORTS_BUDGET,
    slackGroupAbove: e.EDGEWATCH_SLACK_GROUP_ABOVE,
    snapshotRetentionMs: e.EDGEWATCH_SNAPSHOT_RETENTION,
    env: Object.freeze({ ...env }),
  });
}
