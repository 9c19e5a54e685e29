// Reads the environment once, validates it and freezes it. Nothing else reads process.env,
// except rule files' `${NAME}` substitution, which is handed `env` from here.
import { isIP } from 'node:net';
import { z } from 'zod';
import { parseDurationOrZero } from './core/duration.ts';
import { EdgewatchError } from './core/errors.ts';
import { closestName } from './core/suggest.ts';

/** A duration of at least a second: anything shorter would poll (or prune) in a busy loop. */
const duration = z.string().transform((text, ctx) => {
  const ms = parseDurationOrZero(text);
  if (ms === undefined) ctx.addIssue({ code: 'custom', message: `not a duration (write 30s, 15m, 2h, 1d): ${text}` });
  else if (ms < 1_000) ctx.addIssue({ code: 'custom', message: `must be at least 1s: ${text}` });
  return ms ?? z.NEVER;
});

const HOST_NAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i;

/** A SQLite file, or a PostgreSQL URL with a host (the message never repeats the value: it may hold a password). */
const database = z.string().refine((value) => {
  if (!/^postgres(ql)?:\/\//i.test(value)) return true;
  try {
    return new URL(value).hostname !== '';
  } catch {
    return false;
  }
}, 'not a valid PostgreSQL URL: write postgres://user:password@host:5432/database');

const EnvSchema = z.object({
  EDGEWATCH_API_URL: z.url().optional(),
  EDGEWATCH_API_KEY: z.string().min(1).optional(),
  EDGEWATCH_DB: database.default('./data/edgewatch.db'),
  EDGEWATCH_RULES: z.string().default('./rules'),
  EDGEWATCH_TEMPLATES: z.string().default('./templates'),
  EDGEWATCH_PORT: z.coerce.number().int().min(0).max(65535).default(8787),
  /** Loopback by default: the HTTP server has no authentication. */
  EDGEWATCH_HOST: z
    .string()
    .refine((host) => isIP(host) !== 0 || HOST_NAME.test(host), 'must be an IP address or a host name (127.0.0.1, or 0.0.0.0 for every interface)')
    .default('127.0.0.1'),
  SLACK_BOT_TOKEN: z.string().min(1).optional(),
  SLACK_API_URL: z.url().optional(),
  SMTP_URL: z.string().regex(/^smtps?:\/\//, 'must start with smtp:// or smtps://').optional(),
  EMAIL_FROM: z.string().default('edgewatch@localhost'),
  EDGEWATCH_POLL_EVENTS: duration.optional(),
  EDGEWATCH_POLL_KPIS: duration.optional(),
  EDGEWATCH_POLL_REPORTS: duration.optional(),
  EDGEWATCH_POLL_RUNS: duration.optional(),
  /** The market-search sources (edge, rankings, markets, similar, baskets), whose data refreshes nightly. */
  EDGEWATCH_POLL_MARKETS: duration.optional(),
  EDGEWATCH_DELIVERY_ATTEMPTS: z.coerce.number().int().min(1).default(10),
  EDGEWATCH_LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
  /** Trust scorecard requests allowed per reports poll. */
  EDGEWATCH_REPORTS_BUDGET: z.coerce.number().int().min(1).default(50),
  /** More alerts than this for one Slack channel in one delivery pass go as one grouped message. */
  EDGEWATCH_SLACK_GROUP_ABOVE: z.coerce.number().int().min(1).default(10),
  /** How long snapshot history is kept (latest snapshots are kept forever). */
  EDGEWATCH_SNAPSHOT_RETENTION: duration.prefault('30d'),
  /** Pages one poll reads from one list before that source's poll fails (pages that never end). */
  EDGEWATCH_MAX_PAGES: z.coerce.number().int().min(1).default(2000),
  /** Largest response body accepted from the API, in MB; a larger one fails that request without retry. */
  EDGEWATCH_MAX_RESPONSE_MB: z.coerce.number().positive().default(32),
  /** Agent questions (`explain`) asked per UTC day, all rules together. */
  EDGEWATCH_AGENT_DAILY_LIMIT: z.coerce.number().int().min(0).default(50),
});

const PREFIX = 'EDGEWATCH_';

/** Every EDGEWATCH_ variable edgewatch knows: the schema's and the contract's. */
export const KNOWN_VARIABLES: ReadonlySet<string> = new Set(Object.keys(EnvSchema.shape).filter((name) => name.startsWith(PREFIX)));

/** One warning per set EDGEWATCH_ variable that edgewatch does not know (a typo would be ignored silently). */
export function unknownVariableWarnings(env: Record<string, string | undefined>): string[] {
  const known = [...KNOWN_VARIABLES].map((name) => name.slice(PREFIX.length));
  return Object.keys(env)
    .filter((name) => name.startsWith(PREFIX) && env[name] !== undefined && env[name] !== '' && !KNOWN_VARIABLES.has(name))
    .sort()
    .map((name) => {
      const suggestion = closestName(name.slice(PREFIX.length), known);
      return suggestion ? `unknown variable ${name}, did you mean ${PREFIX}${suggestion}?` : `unknown variable ${name}, ignored (not one of edgewatch's variables)`;
    });
}

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
  /** Every market-search source. */
  markets?: number;
}

export interface Config {
  apiUrl: string | undefined;
  apiKey: string | undefined;
  dbPath: string;
  rulesDir: string;
  templatesDir: string;
  port: number;
  /** The address the HTTP server binds to. */
  host: string;
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
  maxPages: number;
  /** EDGEWATCH_MAX_RESPONSE_MB in bytes (1 MB = 1024 * 1024 bytes). */
  maxResponseBytes: number;
  /** Agent questions (`explain`) per UTC day, all rules together. */
  agentDailyLimit: number;
  /** Problems that do not stop a start (unknown variables), for the command to report. */
  warnings: readonly string[];
  /** The environment as read, for `${NAME}` in rule files. */
  env: Readonly<Record<string, string | undefined>>;
}

/** Validates an environment into a frozen Config; throws CONFIG_INVALID naming the variable. */
export function readConfig(env: Record<string, string | undefined> = process.env): Config {
  // Empty values count as unset, as in most .env loaders.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = EnvSchema.safeParse(present);
  if (!parsed.success) {
    // One line per problem, each naming its variable.
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new EdgewatchError('CONFIG_INVALID', lines.join('\n'));
  }
  const e = parsed.data;
  return Object.freeze({
    apiUrl: e.EDGEWATCH_API_URL?.replace(/\/+$/, ''),
    apiKey: e.EDGEWATCH_API_KEY,
    dbPath: e.EDGEWATCH_DB,
    rulesDir: e.EDGEWATCH_RULES,
    templatesDir: e.EDGEWATCH_TEMPLATES,
    port: e.EDGEWATCH_PORT,
    host: e.EDGEWATCH_HOST,
    slackToken: e.SLACK_BOT_TOKEN,
    slackApiUrl: e.SLACK_API_URL,
    smtpUrl: e.SMTP_URL,
    emailFrom: e.EMAIL_FROM,
    pollIntervals: Object.freeze({
      events: e.EDGEWATCH_POLL_EVENTS,
      kpis: e.EDGEWATCH_POLL_KPIS,
      reports: e.EDGEWATCH_POLL_REPORTS,
      runs: e.EDGEWATCH_POLL_RUNS,
      markets: e.EDGEWATCH_POLL_MARKETS,
    }),
    deliveryAttempts: e.EDGEWATCH_DELIVERY_ATTEMPTS,
    logLevel: e.EDGEWATCH_LOG_LEVEL,
    reportsBudget: e.EDGEWATCH_REPORTS_BUDGET,
    slackGroupAbove: e.EDGEWATCH_SLACK_GROUP_ABOVE,
    snapshotRetentionMs: e.EDGEWATCH_SNAPSHOT_RETENTION,
    maxPages: e.EDGEWATCH_MAX_PAGES,
    maxResponseBytes: Math.floor(e.EDGEWATCH_MAX_RESPONSE_MB * 1024 * 1024),
    agentDailyLimit: e.EDGEWATCH_AGENT_DAILY_LIMIT,
    warnings: Object.freeze(unknownVariableWarnings(env)),
    env: Object.freeze({ ...env }),
  });
}
