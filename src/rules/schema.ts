// The shapes of a rule file, as zod schemas (strict: unknown keys are errors). Checks that need
// the context (environment, templates, the source's fields, other files) live in parse.ts.
import { CronExpressionParser } from 'cron-parser';
import { z } from 'zod';
import { parseDuration, parseDurationOrZero } from '../core/duration.ts';
import { SEVERITIES, SOURCES } from '../core/types.ts';
import { isRecord } from '../core/values.ts';
import type { TriggerType } from '../core/types.ts';
import { describeValue } from './issues.ts';
import type { Basket } from './market-inputs.ts';

const RULE_NAME_PATTERN = /^[a-z0-9][a-z0-9-]*$/;

export const TopLevelSchema = z.strictObject({
  channels: z.record(z.string(), z.unknown()).nullish(),
  rules: z.array(z.unknown()).nullish(),
  health: z.unknown().optional(),
  /** Named lists of tickers, for `edge` rules. */
  watchlists: z.record(z.string(), z.unknown()).nullish(),
  /** Named baskets, for `baskets` rules. */
  baskets: z.record(z.string(), z.unknown()).nullish(),
});

const Duration = z
  .unknown()
  .transform((value, ctx) => {
    const ms = typeof value === 'string' ? parseDuration(value) : undefined;
    if (ms === undefined) {
      ctx.addIssue({ code: 'custom', message: `not a duration (write 30s, 15m, 2h, 1d): ${describeValue(value)}` });
      return z.NEVER;
    }
    return ms;
  })
  // What the JSON Schema of rule files (json-schema.ts) says of it.
  .meta({ type: 'string', pattern: '^\\d+(\\.\\d+)?(ms|s|m|h|d)$', description: 'a duration: 30s, 15m, 2h, 1d' });

/** A duration that may be zero (`0s`), in milliseconds. */
const Duration0 = z.unknown().transform((value, ctx) => {
  const ms = typeof value === 'string' ? parseDurationOrZero(value) : undefined;
  if (ms === undefined) {
    ctx.addIssue({ code: 'custom', message: `not a duration (write 30s, 15m, 2h, 1d): ${describeValue(value)}` });
    return z.NEVER;
  }
  return ms;
});

const CRON_FIELDS = ['minute field takes 0-59', 'hour field takes 0-23', 'day-of-month field takes 1-31', 'month field takes 1-12 or JAN-DEC', 'day-of-week field takes 0-7 or SUN-SAT'];

function isCron(expression: string, timezone: string | undefined): boolean {
  try {
    CronExpressionParser.parse(expression, { ...(timezone ? { tz: timezone } : {}), currentDate: new Date(0) });
    return true;
  } catch {
    return false;
  }
}

/**
 * A cron expression of 5 fields (or 6, with seconds first), as cron-parser reads it. The
 * message names the field at fault rather than repeating cron-parser's, which quotes pieces of
 * the expression: one from `${NAME}` is shown only as written.
 */
function cronProblem(expression: string, timezone: string | undefined): string | undefined {
  const quoted = JSON.stringify(expression);
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6) return `not a cron expression of 5 fields: ${quoted}`;
  if (isCron(expression, timezone)) return undefined;
  const names = fields.length === 6 ? ['second field takes 0-59', ...CRON_FIELDS] : CRON_FIELDS;
  // The first field that fails with every other field left at `*`.
  const wrong = fields.findIndex((_, i) => !isCron(fields.map((field, j) => (j === i ? field : '*')).join(' '), timezone));
  return `not a cron expression: ${quoted}${wrong >= 0 ? ` (the ${names[wrong]})` : ''}`;
}

function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

export const DigestSchema = z
  .strictObject({
    cron: z.string().optional(),
    timezone: z.string().optional(),
    window: Duration.optional(),
  })
  .superRefine((digest, ctx) => {
    const hasCron = digest.cron !== undefined;
    const hasWindow = digest.window !== undefined;
    if (hasCron === hasWindow) {
      ctx.addIssue({ code: 'custom', message: 'a digest takes either cron or window, not both' + (hasCron ? '' : ' (it has neither)') });
    }
    if (digest.timezone !== undefined) {
      if (!isTimeZone(digest.timezone)) ctx.addIssue({ code: 'custom', path: ['timezone'], message: `unknown timezone ${JSON.stringify(digest.timezone)}` });
      else if (!hasCron) ctx.addIssue({ code: 'custom', path: ['timezone'], message: 'timezone goes with cron' });
    }
    if (digest.cron !== undefined) {
      const tz = digest.timezone !== undefined && isTimeZone(digest.timezone) ? digest.timezone : undefined;
      const problem = cronProblem(digest.cron, tz);
      if (problem) ctx.addIssue({ code: 'custom', path: ['cron'], message: problem });
    }
  })
  .transform(({ window, ...digest }) => ({ ...digest, ...(window === undefined ? {} : { windowMs: window }) }));
/** A digest: `cron` (with its `timezone`) or `windowMs`. */
export type Digest = z.output<typeof DigestSchema>;

const field = z.string().min(1);
const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);
const scalarOrList = z.union([scalar, z.array(scalar).min(1)]);
const bound = z.union([z.string(), z.number()]);

const crosses = z
  .strictObject({
    type: z.literal('crosses'),
    field,
    above: z.number().optional(),
    below: z.number().optional(),
    abs: z.boolean().default(false),
    rearm: z.number().min(0, { error: 'must be 0 or more' }).default(0),
  })
  .superRefine((t, ctx) => {
    if ((t.above === undefined) === (t.below === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'crosses needs exactly one of above and below' });
    }
  });

const TRIGGER_OPTIONS = [
  crosses,
  z.strictObject({
    type: z.literal('moves'),
    field,
    by: z.number().positive({ error: 'must be greater than 0' }),
    direction: z.enum(['up', 'down', 'any'], { error: 'must be up, down or any' }).default('any'),
  }),
  z.strictObject({ type: z.literal('flips'), field, to: z.boolean().optional() }),
  z.strictObject({ type: z.literal('changes'), field, from: scalarOrList.optional(), to: scalarOrList.optional() }),
  z.strictObject({
    type: z.literal('drops'),
    field,
    by: z.number().positive({ error: 'must be greater than 0' }).default(1),
    to_at_most: bound.optional(),
  }),
  z.strictObject({
    type: z.literal('rises'),
    field,
    by: z.number().positive({ error: 'must be greater than 0' }).default(1),
    to_at_least: bound.optional(),
  }),
  z.strictObject({ type: z.literal('appears'), field }),
  z.strictObject({ type: z.literal('new') }),
  z
    .strictObject({ type: z.literal('overdue'), field, due: field, grace: Duration0.optional() })
    .transform(({ grace, ...trigger }) => ({ ...trigger, graceMs: grace ?? 0 })),
  z.strictObject({ type: z.literal('added'), field }),
] as const;

/** The object schema of an option, under its transform when it has one. */
function objectOf<T extends z.ZodObject | z.ZodPipe<z.ZodObject, z.ZodType>>(option: T): z.ZodObject {
  return option instanceof z.ZodPipe ? option.in : option;
}

/** Every trigger type, in the order messages list them; alerts (core) name the same types. */
const TRIGGER_TYPES = TRIGGER_OPTIONS.map((option) => (objectOf(option).shape.type as z.ZodLiteral<TriggerType>).value) satisfies TriggerType[];

/** The keys of each trigger type, for messages. */
export const TRIGGER_KEYS: ReadonlyMap<string, readonly string[]> = keysByType(TRIGGER_OPTIONS.map(objectOf) as unknown as ReadonlyArray<{ shape: { type: { value: string } } }>);

export const TriggerSchema = z.discriminatedUnion('type', TRIGGER_OPTIONS, {
  error: typedMapError(TRIGGER_TYPES, { missingType: 'trigger: missing type', unknownType: 'unknown trigger type' }),
});
export type Trigger = z.output<typeof TriggerSchema>;

// Filters: `field: value` (equality), `field: [a, b]` (in), `field: { op: value, ... }`.

export const FILTER_OPERATORS = ['gt', 'gte', 'lt', 'lte', 'eq', 'ne', 'in', 'not_in', 'contains'] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

// Operands as the filter compares them (any number, NaN included, as written).
const numberOperand = z
  .custom<number>((value) => typeof value === 'number', { error: (issue) => `expected a number, got ${describeValue(issue.input)}` })
  .meta({ type: 'number' });
const listOperand = z
  .custom<unknown[]>((value) => Array.isArray(value), { error: (issue) => `expected a list, got ${describeValue(issue.input)}` })
  .meta({ type: 'array' });
const singleOperand = z
  .custom<string | number | boolean>((value) => ['string', 'number', 'boolean'].includes(typeof value), {
    error: (issue) => `expected a single value, got ${describeValue(issue.input)}`,
  })
  .meta({ type: ['string', 'number', 'boolean'] });

const OperatorMap = z.strictObject({
  gt: numberOperand.optional(),
  gte: numberOperand.optional(),
  lt: numberOperand.optional(),
  lte: numberOperand.optional(),
  eq: z.unknown().optional(),
  ne: z.unknown().optional(),
  in: listOperand.optional(),
  not_in: listOperand.optional(),
  contains: singleOperand.optional(),
} satisfies Record<FilterOperator, z.ZodType>);

/** A condition as written, as an operator map: a list means `in`, any other value `eq`. */
export const Condition = z.preprocess((value, ctx) => {
  if (Array.isArray(value)) return { in: value };
  if (!isRecord(value)) return { eq: value };
  if (Object.keys(value).length === 0) ctx.addIssue({ code: 'custom', message: `no condition (${FILTER_OPERATORS.join(', ')})` });
  return value;
}, OperatorMap);

/** A rule's filter: every clause must hold on the current snapshot. */
export const FilterSchema = z
  .record(z.string(), Condition, { error: (issue) => `expected a map of field: condition, got ${describeValue(issue.input)}` })
  .nullish()
  .transform((filter) =>
    Object.entries(filter ?? {}).map(([field, operators]) => ({
      field,
      conditions: FILTER_OPERATORS.filter((op) => Object.hasOwn(operators, op)).map((op) => ({ op, value: operators[op] })),
    })),
  );
/** One filter entry: a dotted field path and the conditions that must all hold on it. */
export type FilterClause = z.output<typeof FilterSchema>[number];

const sourceList = SOURCES.join(', ');

/** An `unless` entry: a filter on the entity's own snapshot, or on the same event's latest in `source`. */
export const UnlessSchema = z.strictObject({
  source: z.enum(SOURCES, { error: (issue) => `unknown source ${JSON.stringify(issue.input)} (${SOURCES.join(', ')})` }).optional(),
  filter: FilterSchema,
});
export type UnlessEntry = z.output<typeof UnlessSchema>;

/** `explain`: ask a research agent about the alert; `ask` is a template over the alert's view. */
export const ExplainSchema = z
  .strictObject({
    agent: z.string().min(1),
    ask: z.string().min(1),
    timeout: Duration.optional(),
  })
  .transform(({ timeout, ...explain }) => ({ ...explain, timeoutMs: timeout ?? 30_000 }));
export type Explain = z.output<typeof ExplainSchema>;
const severityList = SEVERITIES.join(', ');

/** One entry of `rules:`; durations come out in milliseconds (`cooldownMs`, `digest.windowMs`). */
export const RuleSchema = z
  .strictObject({
    name: z
      .string()
      .regex(RULE_NAME_PATTERN, { error: (issue) => `bad rule name ${JSON.stringify(issue.input)}: use lower-case letters, digits and dashes` }),
    description: z.string().optional(),
    source: z.enum(SOURCES, {
      error: (issue) => (issue.input === undefined ? `missing (${sourceList})` : `unknown source ${JSON.stringify(issue.input)} (${sourceList})`),
    }),
    trigger: TriggerSchema,
    filter: FilterSchema,
    notify: z.array(z.string().min(1)).min(1, { error: 'needs at least one channel' }),
    severity: z.enum(SEVERITIES, { error: (issue) => `unknown severity ${JSON.stringify(issue.input)} (${severityList})` }).default('info'),
    cooldown: Duration.optional(),
    digest: DigestSchema.optional(),
    template: z.string().min(1).optional(),
    for: Duration.optional(),
    resolve: z.boolean().optional(),
    unless: z.array(UnlessSchema).min(1).optional(),
    explain: ExplainSchema.optional(),
    // The market-search sources' input (parse.ts checks which source takes which).
    watchlist: z.string().min(1).optional(),
    query: z.record(z.string(), z.unknown(), { error: (issue) => `expected a map of the endpoint's parameters, got ${describeValue(issue.input)}` }).optional(),
    basket: z.string().min(1).optional(),
  })
  .superRefine((rule, ctx) => {
    // What each trigger supports (the trigger's own problems are reported by its schema).
    if (rule.for !== undefined && rule.trigger.type !== 'crosses') {
      ctx.addIssue({ code: 'custom', path: ['for'], message: `for (dwell) is only for crosses triggers, not ${rule.trigger.type}` });
    }
    if (rule.resolve && rule.trigger.type !== 'crosses' && rule.trigger.type !== 'overdue') {
      ctx.addIssue({ code: 'custom', path: ['resolve'], message: `resolve is only for crosses and overdue triggers, not ${rule.trigger.type}` });
    }
  })
  .transform(({ cooldown, for: dwell, ...rule }) => ({
    ...rule,
    ...(cooldown === undefined ? {} : { cooldownMs: cooldown }),
    ...(dwell === undefined ? {} : { forMs: dwell }),
  }));

/**
 * A rule as parsed, with where it is written (for messages) and, for `edge` and `baskets` rules,
 * the watchlist's tickers or the basket its name refers to (defined in any rule file).
 */
export type Rule = z.output<typeof RuleSchema> & { file: string; line: number; watchlistTickers?: readonly string[]; basketSpec?: Basket };

/** The keys a rule may have, for messages. */
export const RULE_KEYS = Object.keys(RuleSchema.in.shape);

const EMAIL_ADDRESS = /^[^\s@<>,;]+@[^\s@<>,;]+$/;

/** Standard Webhooks secret: `whsec_` and standard base64 of 24 to 64 bytes. */
function isWebhookSecret(secret: string): boolean {
  const match = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(secret);
  if (!match || match[1]!.length % 4 !== 0) return false;
  const bytes = Buffer.from(match[1]!, 'base64');
  return bytes.toString('base64') === match[1] && bytes.length >= 24 && bytes.length <= 64;
}

const CLOCK_TIME = /^([01]\d|2[0-3]):[0-5]\d$/;
export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** Quiet hours of a channel: deliveries due inside the window wait until it ends (critical ones do not). */
export const QuietSchema = z.strictObject({
  from: z.string().regex(CLOCK_TIME, { error: (issue) => `not a time of day (write HH:MM, 00:00 to 23:59): ${describeValue(issue.input)}` }),
  to: z.string().regex(CLOCK_TIME, { error: (issue) => `not a time of day (write HH:MM, 00:00 to 23:59): ${describeValue(issue.input)}` }),
  timezone: z
    .string()
    .refine(isTimeZone, { error: (issue) => `unknown timezone ${JSON.stringify(issue.input)} (an IANA name such as Europe/London)` })
    .default('UTC'),
  days: z.array(z.enum(WEEKDAYS, { error: (issue) => `unknown day ${JSON.stringify(issue.input)} (${WEEKDAYS.join(', ')})` })).min(1).optional(),
});
export type Quiet = z.output<typeof QuietSchema>;

/** A file's `health`: notices to these channels after `after` failed polls of a source in a row. */
export const HealthSchema = z.strictObject({
  notify: z.array(z.string().min(1)).min(1, { error: 'needs at least one channel' }),
  after: z.number().int({ error: 'must be a whole number' }).min(1, { error: 'must be at least 1' }).default(3),
});
export type HealthSettings = z.output<typeof HealthSchema>;

const quiet = { quiet: QuietSchema.optional() };

const CHANNEL_OPTIONS = [
  z.strictObject({ type: z.literal('slack'), channel: z.string().min(1), ...quiet }),
  z.strictObject({
    type: z.literal('email'),
    to: z
      .union([z.string(), z.array(z.string()).min(1)])
      .transform((to) => (typeof to === 'string' ? [to] : to))
      .superRefine((to, ctx) => {
        to.forEach((address, i) => {
          if (!EMAIL_ADDRESS.test(address.trim())) {
            ctx.addIssue({ code: 'custom', path: [i], message: `not an email address: ${JSON.stringify(address)}` });
          }
        });
      }),
    ...quiet,
  }),
  z.strictObject({
    type: z.literal('webhook'),
    url: z.string().refine(isHttpUrl, { error: 'must be an http:// or https:// URL' }),
    secret: z
      .string()
      .refine(isWebhookSecret, { error: 'must be whsec_ followed by standard base64 of 24 to 64 bytes' })
      .optional(),
    headers: z.record(z.string(), z.string()).default({}),
    ...quiet,
  }),
  z.strictObject({ type: z.literal('console'), ...quiet }),
] as const;

const CHANNEL_TYPES = CHANNEL_OPTIONS.map((option) => option.shape.type.value);

/** The keys of each channel type, for messages. */
export const CHANNEL_KEYS: ReadonlyMap<string, readonly string[]> = keysByType(CHANNEL_OPTIONS);

/** A channel as written under its name. */
export const ChannelSchema = z.discriminatedUnion('type', CHANNEL_OPTIONS, {
  error: typedMapError(CHANNEL_TYPES, { missingType: 'missing type', unknownType: 'unknown channel type' }),
});
/** A channel with its name (the key it is declared under). */
export type Channel = z.output<typeof ChannelSchema> & { name: string };

/** A whole rule file, as the JSON Schema of rule files (json-schema.ts) describes it; parse.ts checks each part on its own. */
export const RuleFileSchema = TopLevelSchema.extend({
  channels: z.record(z.string(), ChannelSchema).nullish(),
  rules: z.array(RuleSchema).nullish(),
});

/** The keys of each option of a union chosen by `type`. */
function keysByType(options: ReadonlyArray<{ shape: { type: { value: string } } }>): Map<string, string[]> {
  return new Map(options.map((option) => [option.shape.type.value, Object.keys(option.shape)]));
}

/**
 * Messages of a union chosen by `type`: not a map, or its type missing or unknown. A type's
 * message names its own place (`trigger: missing type`), so it is shown as it is.
 */
function typedMapError(types: readonly string[], words: { missingType: string; unknownType: string }): z.core.$ZodErrorMap {
  const list = types.join(', ');
  return (issue) => {
    if (issue.code === 'invalid_type' && issue.input !== undefined) return `expected a map with a type (${list}), got ${describeValue(issue.input)}`;
    if (issue.code !== 'invalid_union' || !isRecord(issue.input)) return undefined;
    const type = issue.input.type;
    return type === undefined ? `${words.missingType} (${list})` : `${words.unknownType} ${JSON.stringify(type)} (${list})`;
  };
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** An HTTP header name: a token (RFC 9110, 5.6.2). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** An HTTP header value: visible characters, spaces and tabs; never a line break. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/** Headers of the HTTP connection itself: the client sets them, or they change how it talks. */
const CONNECTION_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'expect']);

/**
 * Why a webhook channel cannot send this header name, or undefined when it can: sending it
 * would fail on every attempt, or replace what edgewatch or the connection sets.
 */
export function headerNameProblem(name: string): string | undefined {
  const quoted = `header ${JSON.stringify(name)}`;
  const lower = name.toLowerCase();
  if (!HEADER_NAME.test(name)) return `${quoted}: not an HTTP header name (letters, digits and !#$%&'*+-.^_\`|~ only)`;
  if (lower === 'content-type' || lower.startsWith('webhook-')) return `${quoted} cannot be set here (content-type and webhook-* are edgewatch's own)`;
  if (CONNECTION_HEADERS.has(lower) || lower.startsWith('proxy-')) {
    return `${quoted} cannot be set here (Host, Content-Length, Transfer-Encoding, Connection, Keep-Alive, Upgrade, TE, Trailer, Expect and Proxy-* belong to the HTTP connection)`;
  }
  return undefined;
}

/** Why a header value cannot be sent, or undefined. The value itself is never quoted: it may hold a secret. */
export function headerValueProblem(value: string): string | undefined {
  return HEADER_VALUE.test(value) ? undefined : 'the value holds a line break, a control character or a character beyond Latin-1, which HTTP headers cannot carry';
}
