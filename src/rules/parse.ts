// Rule files: YAML text -> channels and rules, or every problem with its position.
// Pure: the caller hands in the environment, the template names and which transports exist.
import { isScalar, LineCounter, parseDocument, visit, type Document } from 'yaml';
import type { z } from 'zod';
import type { RuleProblem, SourceName } from '../core/types.ts';
import { isMarketSource, MARKET_SOURCES, SOURCES } from '../core/types.ts';
import { BasketLeg } from '../api/market-schemas.ts';
import { editDistance } from '../core/suggest.ts';
import { isRecord } from '../core/values.ts';
import { checkField, ordinalOrder, undocumentedValue, type FieldKind } from './fields.ts';
import { RELATED_SOURCES } from './inhibit.ts';
import { createLocator, describeValue, formatPath, fromZodIssues, toProblems, type Issue, type IssuePath, type Position } from './issues.ts';
import {
  BASKET_KEYS,
  BasketSchema,
  INPUT_KEY,
  INPUT_REQUIRED,
  matchesEveryMarket,
  MARKETS_PAGE_BUDGET,
  querySchema,
  similarQueryProblem,
  WatchlistSchema,
  type Basket,
} from './market-inputs.ts';
import {
  CHANNEL_KEYS,
  ChannelSchema,
  DigestSchema,
  FILTER_OPERATORS,
  headerNameProblem,
  headerValueProblem,
  ExplainSchema,
  HealthSchema,
  QuietSchema,
  RULE_KEYS,
  RuleSchema,
  UnlessSchema,
  type HealthSettings,
  TopLevelSchema,
  TRIGGER_KEYS,
  TriggerSchema,
  type Channel,
  type Rule,
  type Trigger,
} from './schema.ts';

export interface RuleContext {
  /** The environment, for `${NAME}` in string values. */
  env: Readonly<Record<string, string | undefined>>;
  /** Variables holding edgewatch's own credentials: `${NAME}` of one is refused, so that no rule sends it anywhere. */
  credentials: readonly string[];
  /** Template names available: `edge` for templates/edge.* */
  templates: ReadonlySet<string>;
  /** Which transports are configured (SLACK_BOT_TOKEN, SMTP_URL). */
  transports: { slack: boolean; email: boolean };
}

export interface ParsedRules {
  channels: Channel[];
  rules: Rule[];
  problems: RuleProblem[];
  /** Source health notices (`health:`), when a file declares them. */
  health?: HealthSettings;
  /** What is valid but likely not meant (a filter value the API never writes, a markets query matching every market); `validate` prints them and still succeeds. */
  warnings: RuleProblem[];
}

/** The top-level definitions that market-search rules name. */
export type InputKind = 'watchlist' | 'basket';

/** A located name, for the checks across files. */
export interface NameAt extends Position {
  name: string;
  /** The name as written in the file, for messages (`${NAME}` unexpanded). */
  written: string;
}

/** One file parsed on its own, with what the checks across files need. */
export interface ParsedRuleFileDetail extends ParsedRules {
  file: string;
  /** Every channel declared, valid or not, in file order. */
  channelNames: NameAt[];
  /** Every rule with a string name, valid or not, in file order. */
  ruleNames: NameAt[];
  /** Every channel name in a `notify` list (the name is the channel's). */
  notifyRefs: Array<NameAt & { rule: string }>;
  /** The file's `health`, where it is written and the channels it names. */
  healthAt?: Position & { settings: HealthSettings | undefined; notifyRefs: NameAt[] };
  /** Every watchlist and basket declared, valid or not, in file order. */
  inputNames: Array<NameAt & { kind: InputKind }>;
  /** The valid watchlists and baskets. */
  watchlists: Array<{ name: string; tickers: string[] }>;
  baskets: Array<{ name: string; basket: Basket }>;
  /** Every rule's `watchlist` or `basket` (the name is the definition's). */
  inputRefs: Array<NameAt & { rule: string; kind: InputKind }>;
}

/** Parses one rule file; names and notify references are checked within this file alone. */
export function parseRuleFile(text: string, file: string, ctx: RuleContext): ParsedRules {
  return checkAcrossFiles([parseRuleFileDetail(text, file, ctx)]);
}

const TOP_LEVEL_KEYS = Object.keys(TopLevelSchema.shape);
/** `channels, rules, watchlists and baskets` */
const TOP_LEVEL_LIST = `${TOP_LEVEL_KEYS.slice(0, -1).join(', ')} and ${TOP_LEVEL_KEYS.at(-1)}`;
const DIGEST_KEYS = Object.keys(DigestSchema.in.shape);

/** Where the first unresolved alias (or else the first alias) starts; 0 when there is none. */
function aliasOffset(doc: Document): number {
  let first: number | undefined;
  let unresolved: number | undefined;
  visit(doc, {
    Alias(_key, node) {
      const start = node.range?.[0];
      first ??= start;
      if (node.resolve(doc) === undefined) {
        unresolved = start;
        return visit.BREAK;
      }
      return undefined;
    },
  });
  return unresolved ?? first ?? 0;
}

/**
 * Where each repeated key of a map starts. The yaml library's own check (`uniqueKeys`) compares
 * every key with all before it, which is quadratic in a map's size; this one uses a set per map.
 */
function duplicateKeyOffsets(doc: Document): number[] {
  const offsets: number[] = [];
  visit(doc, {
    Map(_key, map) {
      const seen = new Set<unknown>();
      for (const pair of map.items) {
        if (!isScalar(pair.key)) continue;
        if (seen.has(pair.key.value)) offsets.push(pair.key.range?.[0] ?? 0);
        seen.add(pair.key.value);
      }
    },
  });
  return offsets;
}

/** Parses one rule file without the checks that depend on other files (unique names, notify). */
export function parseRuleFileDetail(text: string, file: string, ctx: RuleContext): ParsedRuleFileDetail {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: false });
  const empty: ParsedRuleFileDetail = {
    file,
    channels: [],
    rules: [],
    problems: [],
    warnings: [],
    channelNames: [],
    ruleNames: [],
    notifyRefs: [],
    inputNames: [],
    watchlists: [],
    baskets: [],
    inputRefs: [],
  };
  const yamlErrors = [
    ...doc.errors.map((error) => ({ offset: error.pos[0], message: error.message.split('\n')[0] })),
    ...duplicateKeyOffsets(doc).map((offset) => ({ offset, message: 'Map keys must be unique' })),
  ];
  if (yamlErrors.length > 0) {
    const problems = yamlErrors
      .sort((a, b) => a.offset - b.offset)
      .map((error) => {
        const { line, col } = lineCounter.linePos(error.offset);
        return { file, line, column: col, message: `invalid YAML: ${error.message}` };
      });
    return { ...empty, problems };
  }

  let js: unknown;
  try {
    js = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    // An alias without its anchor, or too many aliases: the document parses but has no value.
    const { line, col } = lineCounter.linePos(aliasOffset(doc));
    return { ...empty, problems: [{ file, line, column: col, message: `invalid YAML: ${(error as Error).message.split('\n')[0]}` }] };
  }
  const substitution: Substitution = { issues: [], expanded: new Map() };
  const raw = substituteEnv(js, ctx, [], substitution);
  const envIssues = substitution.issues;
  /** The string at `path` as written in the file (differs from `value` when `${NAME}` expanded it). */
  const writtenAt = (path: IssuePath, value: string): string => substitution.expanded.get(pathKey(path))?.written ?? value;
  const issues: Issue[] = [];
  const warnings: Issue[] = [];
  const channels: Array<{ base: IssuePath; channel: Channel }> = [];
  const watchlists: Array<{ base: IssuePath; name: string; tickers: string[] }> = [];
  const baskets: Array<{ base: IssuePath; name: string; basket: Basket }> = [];
  const rules: Array<{ base: IssuePath; rule: Rule }> = [];
  const position = createLocator(doc, lineCounter);
  const detail = { ...empty };

  if (raw !== null && raw !== undefined) {
    if (!isRecord(raw)) {
      issues.push({ path: [], message: `a rule file is a map with the keys ${TOP_LEVEL_LIST}, not ${describeValue(raw)}` });
    } else {
      const top = TopLevelSchema.safeParse(raw, { reportInput: true });
      if (!top.success) {
        issues.push(
          ...fromZodIssues(top.error.issues, {
            base: [],
            label: '',
            unknownKey: (key) => `unknown top-level key "${key}"${didYouMean(key, TOP_LEVEL_KEYS)} (a rule file has ${TOP_LEVEL_LIST})`,
          }),
        );
      }
      if (isRecord(raw.channels)) {
        for (const [name, value] of Object.entries(raw.channels)) {
          const base = ['channels', name];
          detail.channelNames.push({ name, written: name, ...position(base, 'key') });
          const channel = parseChannel(name, value, base, ctx, issues);
          if (channel) channels.push({ base, channel });
        }
      }
      if (raw.health !== undefined) detail.healthAt = parseHealth(raw.health, position, issues);
      if (isRecord(raw.watchlists)) {
        for (const [name, value] of Object.entries(raw.watchlists)) {
          const base = ['watchlists', name];
          detail.inputNames.push({ kind: 'watchlist', name, written: name, ...position(base, 'key') });
          const tickers = parseWatchlist(name, value, base, issues);
          if (tickers) watchlists.push({ base, name, tickers });
        }
      }
      if (isRecord(raw.baskets)) {
        for (const [name, value] of Object.entries(raw.baskets)) {
          const base = ['baskets', name];
          detail.inputNames.push({ kind: 'basket', name, written: name, ...position(base, 'key') });
          const basket = parseBasket(name, value, base, issues);
          if (basket) baskets.push({ base, name, basket });
        }
      }
      if (Array.isArray(raw.rules)) {
        raw.rules.forEach((value, index) => {
          const base = ['rules', index];
          const name = isRecord(value) && typeof value.name === 'string' ? value.name : undefined;
          const writtenName = name === undefined ? `rules[${index}]` : writtenAt([...base, 'name'], name);
          const rule = parseRule(value, base, name === undefined ? writtenName : `rule "${writtenName}"`, ctx, issues, warnings);
          if (!isRecord(value)) return;
          for (const kind of ['watchlist', 'basket'] as const) {
            const ref = value[kind];
            if (typeof ref === 'string' && ref !== '') {
              const path = [...base, kind];
              detail.inputRefs.push({ kind, rule: writtenName, name: ref, written: writtenAt(path, ref), ...position(path) });
            }
          }
          if (name !== undefined) detail.ruleNames.push({ name, written: writtenName, ...position([...base, 'name']) });
          if (Array.isArray(value.notify)) {
            value.notify.forEach((channel, i) => {
              if (typeof channel === 'string') {
                const path = [...base, 'notify', i];
                detail.notifyRefs.push({ rule: writtenName, name: channel, written: writtenAt(path, channel), ...position(path) });
              }
            });
          }
          if (rule) rules.push({ base, rule: { ...rule, file, line: position(base).line } });
        });
      }
    }
  }

  // A value that could not be substituted is reported once, as the missing variable.
  const envPaths = new Set(envIssues.map((issue) => pathKey(issue.path)));
  const all = [...envIssues, ...issues.filter((issue) => !pathPrefixes(issue.path).some((prefix) => envPaths.has(pathKey(prefix))))];
  // Channels, watchlists, baskets and rules are entries two segments deep (channels.NAME,
  // rules[i]): any problem at or below an entry makes it invalid.
  const invalidEntries = new Set(all.filter((issue) => issue.path.length >= 2).map((issue) => pathKey(issue.path.slice(0, 2))));
  const valid = (base: IssuePath) => !invalidEntries.has(pathKey(base));
  return {
    ...detail,
    channels: channels.filter((c) => valid(c.base)).map((c) => c.channel),
    watchlists: watchlists.filter((w) => valid(w.base)).map(({ name, tickers }) => ({ name, tickers })),
    baskets: baskets.filter((b) => valid(b.base)).map(({ name, basket }) => ({ name, basket })),
    rules: rules.filter((r) => valid(r.base)).map((r) => r.rule),
    problems: toProblems(
      position,
      file,
      all.map((issue) => ({ ...issue, message: quoteAsWritten(issue, substitution.expanded) })),
    ),
    warnings: toProblems(
      position,
      file,
      warnings.filter((warning) => valid(warning.path.slice(0, 2))).map((warning) => ({ ...warning, message: quoteAsWritten(warning, substitution.expanded) })),
    ),
  };
}

/** Channels named in an unknown-channel message; more are counted instead. */
const LISTED_CHANNELS = 30;
/** Unknown channel names that get a "did you mean"; later ones do not. */
const SUGGESTED_CHANNELS = 20;

/**
 * The checks across files: channel, rule, watchlist and basket names are unique (the second
 * occurrence is reported, naming the first), every notify entry names a declared channel, and
 * every rule's watchlist or basket a declared one. The result keeps the first of each name and
 * only rules whose channels, watchlist and basket are valid, with the watchlist's tickers or the
 * basket attached.
 */
export function checkAcrossFiles(files: readonly ParsedRuleFileDetail[]): ParsedRules {
  const problems: RuleProblem[] = [];
  const warnings = files.flatMap((parsed) => parsed.warnings);
  const firstChannel = new Map<string, string>();
  const firstRule = new Map<string, string>();
  /** Where each watchlist and basket name is first defined. */
  const firstInput = { watchlist: new Map<string, { file: string; at: string }>(), basket: new Map<string, { file: string; at: string }>() };
  for (const parsed of files) {
    problems.push(...parsed.problems);
    for (const at of parsed.inputNames) {
      const first = firstInput[at.kind].get(at.name);
      if (first !== undefined) problems.push(problemAt(parsed.file, at, `${at.kind} "${at.written}" is already defined at ${first.at}`));
      else firstInput[at.kind].set(at.name, { file: parsed.file, at: `${parsed.file}:${at.line}:${at.column}` });
    }
    for (const at of parsed.channelNames) {
      const first = firstChannel.get(at.name);
      if (first !== undefined) problems.push(problemAt(parsed.file, at, `channel "${at.written}" is already defined at ${first}`));
      else firstChannel.set(at.name, `${parsed.file}:${at.line}:${at.column}`);
    }
    for (const at of parsed.ruleNames) {
      const first = firstRule.get(at.name);
      if (first !== undefined) problems.push(problemAt(parsed.file, at, `rule "${at.written}" is already defined at ${first}`));
      else firstRule.set(at.name, `${parsed.file}:${at.line}:${at.column}`);
    }
  }
  const declared = [...firstChannel.keys()].sort();
  const channelList =
    declared.length === 0 ? ' (no channel is defined)' : declared.length <= LISTED_CHANNELS ? ` (channels: ${declared.join(', ')})` : ` (${declared.length} channels are defined)`;
  // A suggestion compares the name with every channel: only the first unknown names get one,
  // so that a file full of them is still checked in linear time.
  let suggestions = 0;
  for (const parsed of files) {
    for (const ref of parsed.notifyRefs) {
      if (!firstChannel.has(ref.name)) {
        const suggestion = suggestions++ < SUGGESTED_CHANNELS ? didYouMean(ref.name, declared) : '';
        problems.push(problemAt(parsed.file, ref, `rule "${ref.rule}": unknown channel "${ref.written}" in notify${suggestion}${channelList}`));
      }
    }
    for (const ref of parsed.inputRefs) {
      const names = firstInput[ref.kind];
      if (names.has(ref.name)) continue;
      const known = names.size === 0 ? `no ${ref.kind} is defined: declare it under ${ref.kind}s` : `${ref.kind}s: ${[...names.keys()].sort().join(', ')}`;
      problems.push(problemAt(parsed.file, ref, `rule "${ref.rule}": unknown ${ref.kind} "${ref.written}"${didYouMean(ref.name, [...names.keys()])} (${known})`));
    }
  }

  const channels = new Map<string, Channel>();
  for (const parsed of files) for (const channel of parsed.channels) if (!channels.has(channel.name)) channels.set(channel.name, channel);
  // The first definition of each name, when it is valid.
  const watchlists = new Map<string, string[]>();
  const baskets = new Map<string, Basket>();
  for (const parsed of files) {
    for (const { name, tickers } of parsed.watchlists) if (firstInput.watchlist.get(name)?.file === parsed.file) watchlists.set(name, tickers);
    for (const { name, basket } of parsed.baskets) if (firstInput.basket.get(name)?.file === parsed.file) baskets.set(name, basket);
  }
  const ruleNames = new Set<string>();
  const rules: Rule[] = [];
  for (const parsed of files) {
    for (const rule of parsed.rules) {
      if (ruleNames.has(rule.name) || !rule.notify.every((name) => channels.has(name))) continue;
      const watchlistTickers = rule.watchlist === undefined ? undefined : watchlists.get(rule.watchlist);
      const basketSpec = rule.basket === undefined ? undefined : baskets.get(rule.basket);
      if ((rule.watchlist !== undefined && !watchlistTickers) || (rule.basket !== undefined && !basketSpec)) continue;
      ruleNames.add(rule.name);
      rules.push({ ...rule, ...(watchlistTickers ? { watchlistTickers } : {}), ...(basketSpec ? { basketSpec } : {}) });
    }
  }
  let health: HealthSettings | undefined;
  let healthFirst: string | undefined;
  for (const parsed of files) {
    const at = parsed.healthAt;
    if (at === undefined) continue;
    if (healthFirst !== undefined) {
      problems.push(problemAt(parsed.file, at, `health is already declared at ${healthFirst} (one file declares it)`));
      continue;
    }
    healthFirst = `${parsed.file}:${at.line}:${at.column}`;
    for (const ref of at.notifyRefs) {
      if (!firstChannel.has(ref.name)) problems.push(problemAt(parsed.file, ref, `health: unknown channel "${ref.written}" in notify${didYouMean(ref.name, declared)}${channelList}`));
    }
    if (at.settings && at.settings.notify.every((name) => channels.has(name))) health = at.settings;
  }

  const order = new Map(files.map((f, i) => [f.file, i]));
  const byPosition = (a: RuleProblem, b: RuleProblem) => (order.get(a.file) ?? 0) - (order.get(b.file) ?? 0) || a.line - b.line || a.column - b.column;
  problems.sort(byPosition);
  warnings.sort(byPosition);
  return { channels: [...channels.values()], rules, problems, warnings, ...(health ? { health } : {}) };
}

/** `file:line:column: message` */
export function formatProblem(problem: RuleProblem): string {
  return `${problem.file}:${problem.line}:${problem.column}: ${problem.message}`;
}

/** `file:line:column: warning: message` */
export function formatWarning(warning: RuleProblem): string {
  return formatProblem({ ...warning, message: `warning: ${warning.message}` });
}

function problemAt(file: string, at: Position, message: string): RuleProblem {
  return { file, line: at.line, column: at.column, message };
}

// ---------------------------------------------------------------------------------------------
// Health

function parseHealth(value: unknown, position: (path: IssuePath, at?: 'key' | 'value') => Position, issues: Issue[]): NonNullable<ParsedRuleFileDetail['healthAt']> {
  const base = ['health'];
  const parsed = HealthSchema.safeParse(value, { reportInput: true });
  if (!parsed.success) {
    issues.push(
      ...fromZodIssues(parsed.error.issues, {
        base,
        label: 'health',
        unknownKey: (key) => `unknown key "${key}" in health (its keys: ${Object.keys(HealthSchema.shape).join(', ')})`,
      }),
    );
  }
  const notifyRefs: NameAt[] = [];
  if (isRecord(value) && Array.isArray(value.notify)) {
    value.notify.forEach((name, i) => {
      if (typeof name === 'string') notifyRefs.push({ name, written: name, ...position([...base, 'notify', i]) });
    });
  }
  return { ...position(base, 'key'), settings: parsed.data, notifyRefs };
}

// ---------------------------------------------------------------------------------------------
// Channels

function parseChannel(name: string, value: unknown, base: IssuePath, ctx: RuleContext, issues: Issue[]): Channel | undefined {
  const label = `channel "${name}"`;
  const type = isRecord(value) ? value.type : undefined;
  if (type === 'slack' && !ctx.transports.slack) issues.push({ path: [...base, 'type'], message: `${label}: slack needs SLACK_BOT_TOKEN` });
  if (type === 'email' && !ctx.transports.email) issues.push({ path: [...base, 'type'], message: `${label}: email needs SMTP_URL` });
  if (type === 'webhook' && isRecord(value) && isRecord(value.headers)) {
    for (const [header, headerValue] of Object.entries(value.headers)) {
      const nameProblem = headerNameProblem(header);
      if (nameProblem) issues.push({ path: [...base, 'headers', header], at: 'key', message: `${label}: ${nameProblem}` });
      const valueProblem = typeof headerValue === 'string' ? headerValueProblem(headerValue) : undefined;
      if (valueProblem) issues.push({ path: [...base, 'headers', header], message: `${label}: header ${JSON.stringify(header)}: ${valueProblem}` });
    }
  }
  const parsed = ChannelSchema.safeParse(value, { reportInput: true });
  if (!parsed.success) {
    issues.push(
      ...fromZodIssues(parsed.error.issues, {
        base,
        label,
        unknownKey: (key, path) =>
          path[0] === 'quiet'
            ? `unknown key "${key}" in quiet (its keys: ${Object.keys(QuietSchema.shape).join(', ')})`
            : `unknown key "${key}" in a ${String(type)} channel (its keys: ${keysOf(CHANNEL_KEYS, type)})`,
      }),
    );
    return undefined;
  }
  return { ...parsed.data, name };
}

// ---------------------------------------------------------------------------------------------
// Watchlists and baskets

function parseWatchlist(name: string, value: unknown, base: IssuePath, issues: Issue[]): string[] | undefined {
  const parsed = WatchlistSchema.safeParse(value, { reportInput: true });
  if (parsed.success) return parsed.data;
  issues.push(...fromZodIssues(parsed.error.issues, { base, label: `watchlist "${name}"`, unknownKey: (key) => `unknown key "${key}"` }));
  return undefined;
}

const LEG_KEYS = Object.keys(BasketLeg.shape);

function parseBasket(name: string, value: unknown, base: IssuePath, issues: Issue[]): Basket | undefined {
  const parsed = BasketSchema.safeParse(value, { reportInput: true });
  if (parsed.success) return parsed.data;
  const unknownKey = (key: string, path: IssuePath) =>
    path.length === 0
      ? `unknown key "${key}"${didYouMean(key, BASKET_KEYS)} in a basket (its keys: ${BASKET_KEYS.join(', ')})`
      : `${formatPath(path)}: unknown key "${key}"${didYouMean(key, LEG_KEYS)} in a leg (its keys: ${LEG_KEYS.join(', ')})`;
  issues.push(...fromZodIssues(parsed.error.issues, { base, label: `basket "${name}"`, unknownKey }));
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Rules

/** `label` names the rule in messages: `rule "name"` as written, or `rules[2]`. */
function parseRule(
  value: unknown,
  base: IssuePath,
  label: string,
  ctx: RuleContext,
  issues: Issue[],
  warnings: Issue[],
): Omit<Rule, 'file' | 'line'> | undefined {
  if (!isRecord(value)) {
    issues.push({ path: base, message: `${label}: a rule is a map with name, source, trigger and notify, not ${describeValue(value)}` });
    return undefined;
  }
  const parsed = RuleSchema.safeParse(value, { reportInput: true });
  if (!parsed.success) {
    issues.push(...fromZodIssues(ownKeysFirst(parsed.error.issues), { base, label, unknownKey: (key, path) => unknownRuleKey(key, path, value) }));
  }
  const source = isOneOf(value.source, SOURCES) ? value.source : undefined;
  const trigger = parsed.success ? parsed.data.trigger : TriggerSchema.safeParse(value.trigger).data;
  if (source !== undefined && trigger !== undefined && trigger.type !== 'new') {
    checkTriggerField(trigger, source, [...base, 'trigger'], label, issues);
  } else if (source !== undefined && isRecord(value.trigger) && typeof value.trigger.field === 'string' && value.trigger.field !== '') {
    // The trigger has other problems; its field is still worth checking.
    const check = checkField(source, value.trigger.field);
    if (!check.ok) issues.push({ path: [...base, 'trigger', 'field'], message: `${label}: trigger: ${check.message}` });
  }
  if (source !== undefined) checkMarketInput(value, source, base, label, issues, warnings);
  if (source !== undefined && isRecord(value.filter)) {
    for (const [field, condition] of Object.entries(value.filter)) {
      const check = checkField(source, field);
      if (!check.ok) issues.push({ path: [...base, 'filter', field], at: 'key', message: `${label}: filter: ${check.message}` });
      for (const { path, value: compared } of comparedValues(condition, [...base, 'filter', field])) {
        const why = undocumentedValue(source, field, compared);
        if (why) warnings.push({ path, message: `${label}: filter ${field}: ${why}` });
      }
    }
  }
  if (source !== undefined && Array.isArray(value.unless)) checkUnless(value.unless, source, [...base, 'unless'], label, issues);
  if (typeof value.template === 'string' && value.template !== '' && !ctx.templates.has(value.template)) {
    const known = ctx.templates.size > 0 ? `templates: ${[...ctx.templates].sort().join(', ')}` : 'there are no templates';
    issues.push({ path: [...base, 'template'], message: `${label}: unknown template ${JSON.stringify(value.template)} (${known})` });
  }
  return parsed.data;
}

/** `unless` entries: their source can be related to the rule's by event, and their filter's fields exist. */
function checkUnless(entries: unknown[], source: SourceName, base: IssuePath, label: string, issues: Issue[]): void {
  entries.forEach((entry, i) => {
    if (!isRecord(entry)) return;
    const other = isOneOf(entry.source, SOURCES) ? entry.source : undefined;
    if (other !== undefined && other !== source && (!RELATED_SOURCES.has(source) || !RELATED_SOURCES.has(other))) {
      const related = [...RELATED_SOURCES].join(', ');
      issues.push({
        path: [...base, i, 'source'],
        message: `${label}: unless[${i}]: source ${other} cannot be related to ${source} (sources are related by event ticker: ${related})`,
      });
    }
    if (isRecord(entry.filter)) {
      for (const field of Object.keys(entry.filter)) {
        const check = checkField(other ?? source, field);
        if (!check.ok) issues.push({ path: [...base, i, 'filter', field], at: 'key', message: `${label}: unless[${i}]: filter: ${check.message}` });
      }
    }
  });
}

/** The values a filter condition compares a field with for equality (`x`, `[x, y]`, eq, ne, in, not_in), with their paths. */
function comparedValues(condition: unknown, path: IssuePath): Array<{ path: IssuePath; value: unknown }> {
  const listed = (list: unknown, at: IssuePath) => (Array.isArray(list) ? (list as unknown[]).map((value, i) => ({ path: [...at, i], value })) : []);
  if (Array.isArray(condition)) return listed(condition, path);
  if (!isRecord(condition)) return [{ path, value: condition }];
  return [
    ...(['eq', 'ne'] as const).filter((op) => Object.hasOwn(condition, op)).map((op) => ({ path: [...path, op], value: condition[op] })),
    ...(['in', 'not_in'] as const).flatMap((op) => listed(condition[op], [...path, op])),
  ];
}

/** The rule's own problems first, then its trigger's, then its filter's, as they have always been listed. */
function ownKeysFirst(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue[] {
  const part = (issue: z.core.$ZodIssue) => ['trigger', 'filter'].indexOf(String(issue.path[0])) + 1;
  return [...issues].sort((a, b) => part(a) - part(b));
}

const CROSSES_ONLY = new Set(['above', 'below', 'abs', 'rearm']);
const EXPLAIN_KEYS = Object.keys(ExplainSchema.in.shape);
const UNLESS_KEYS = Object.keys(UnlessSchema.shape);

/** The message for an unknown key at `path` of a rule (its digest, trigger or filter, or itself). */
function unknownRuleKey(key: string, path: IssuePath, rule: Record<string, unknown>): string {
  switch (path[0]) {
    case 'digest':
      return `unknown key "${key}" in digest (its keys: ${DIGEST_KEYS.join(', ')})`;
    case 'trigger': {
      const type = isRecord(rule.trigger) ? String(rule.trigger.type) : '';
      const keys = keysOf(TRIGGER_KEYS, type);
      return CROSSES_ONLY.has(key)
        ? `trigger: ${key} is only for crosses triggers (a ${type} trigger has ${keys})`
        : `trigger: unknown key "${key}" in a ${type} trigger (it has ${keys})`;
    }
    case 'explain':
      return `explain: unknown key "${key}"${didYouMean(key, EXPLAIN_KEYS)} (its keys: ${EXPLAIN_KEYS.join(', ')})`;
    case 'unless':
      if (path.length === 2) return `${formatPath(path)}: unknown key "${key}" (an unless entry has ${UNLESS_KEYS.join(', ')})`;
      return `${formatPath(path)}: unknown operator "${key}"${didYouMean(key, FILTER_OPERATORS)} (${FILTER_OPERATORS.join(', ')})`;
    case 'filter':
      return `${formatPath(path)}: unknown operator "${key}"${didYouMean(key, FILTER_OPERATORS)} (${FILTER_OPERATORS.join(', ')})`;
    default:
      return `unknown key "${key}"${didYouMean(key, RULE_KEYS)} (a rule has ${RULE_KEYS.join(', ')})`;
  }
}

/** `type, field, by` */
function keysOf(keysByType: ReadonlyMap<string, readonly string[]>, type: unknown): string {
  return (keysByType.get(String(type)) ?? []).join(', ');
}

/** The trigger's field exists for the source and holds what the trigger compares. */
function checkTriggerField(trigger: Exclude<Trigger, { type: 'new' }>, source: SourceName, base: IssuePath, label: string, issues: Issue[]): void {
  const at = (key: string): IssuePath => [...base, key];
  const check = checkField(source, trigger.field);
  if (!check.ok) {
    issues.push({ path: at('field'), message: `${label}: trigger: ${check.message}` });
    return;
  }
  const { kind } = check;
  const wrongKind = (needs: string) =>
    issues.push({ path: at('field'), message: `${label}: trigger: ${trigger.type} needs ${needs}; ${describeKind(trigger.field, kind)}` });
  switch (trigger.type) {
    case 'crosses':
    case 'moves':
      if (kind !== 'number' && kind !== 'unknown') wrongKind('a numeric field');
      return;
    case 'flips':
      if (kind !== 'boolean' && kind !== 'unknown') wrongKind('a boolean field');
      return;
    case 'drops':
    case 'rises': {
      const boundKey = trigger.type === 'drops' ? 'to_at_most' : 'to_at_least';
      const bound = trigger.type === 'drops' ? trigger.to_at_most : trigger.to_at_least;
      if (kind === 'ordinal') {
        const order = ordinalOrder(trigger.field) ?? [];
        // The order's name (trust_label), not the whole path: messages show no other value than their own.
        const ordinal = trigger.field.slice(trigger.field.lastIndexOf('.') + 1);
        const known = typeof bound === 'string' && order.some((label) => label.toLowerCase() === bound.trim().toLowerCase());
        if (bound !== undefined && !known) {
          issues.push({
            path: at(boundKey),
            message: `${label}: trigger: ${boundKey} must be one of ${order.join(', ')} (the order of ${ordinal}, best first), not ${describeValue(bound)}`,
          });
        }
        if (!Number.isInteger(trigger.by)) {
          issues.push({ path: at('by'), message: `${label}: trigger: by counts steps of the order of ${ordinal}: a whole number` });
        }
      } else if (kind === 'number') {
        if (bound !== undefined && typeof bound !== 'number') {
          issues.push({ path: at(boundKey), message: `${label}: trigger: ${boundKey} must be a number for the numeric field ${trigger.field}` });
        }
      } else if (kind !== 'unknown') {
        wrongKind('an ordinal field (trust_label, evidence_grade, liquidity_tier) or a numeric one');
      }
      return;
    }
    case 'added':
      if (kind !== 'array' && kind !== 'unknown') wrongKind('a list field (e.g. warnings)');
      return;
    case 'changes':
    case 'appears':
      return;
    case 'overdue': {
      const due = checkField(source, trigger.due);
      if (!due.ok) issues.push({ path: at('due'), message: `${label}: trigger: due: ${due.message}` });
      return;
    }
  }
}

const INPUT_KEYS = ['watchlist', 'query', 'basket'] as const;

/** `source edge`, `sources rankings, markets and similar` */
function sourcesTaking(key: (typeof INPUT_KEYS)[number]): string {
  const sources = MARKET_SOURCES.filter((source) => INPUT_KEY[source] === key);
  return sources.length === 1 ? `source ${sources[0]}` : `sources ${sources.slice(0, -1).join(', ')} and ${sources.at(-1)}`;
}

/**
 * A market-search rule's input: the key its source takes (`watchlist`, `query` or `basket`), and
 * a query's parameters checked against the endpoint's. Other sources take none of them.
 */
function checkMarketInput(rule: Record<string, unknown>, source: SourceName, base: IssuePath, label: string, issues: Issue[], warnings: Issue[]): void {
  const wanted = isMarketSource(source) ? INPUT_KEY[source] : undefined;
  for (const key of INPUT_KEYS) {
    if (key !== wanted && Object.hasOwn(rule, key)) {
      issues.push({ path: [...base, key], at: 'key', message: `${label}: ${key} is for ${sourcesTaking(key)}, not ${source}` });
    }
  }
  if (!isMarketSource(source) || wanted === undefined) return;
  if (!Object.hasOwn(rule, wanted)) {
    if (source === 'markets') warnings.push({ path: base, message: `${label}: no query: ${EVERY_MARKET}` });
    if (!INPUT_REQUIRED.has(source)) return;
    const what = wanted === 'query' ? 'a query (the endpoint\'s parameters)' : `a ${wanted} (the name of one under ${wanted}s)`;
    issues.push({ path: base, message: `${label}: source ${source} needs ${what}` });
    return;
  }
  if (wanted !== 'query' || source === 'edge' || source === 'baskets' || !isRecord(rule.query)) return;
  const query = rule.query;
  const at = [...base, 'query'];
  const similarProblem = source === 'similar' ? similarQueryProblem(query) : undefined;
  if (similarProblem) {
    issues.push({ path: at, message: `${label}: query: ${similarProblem}` });
    return;
  }
  const schema = querySchema(source, query);
  const parameters = Object.keys(schema.shape);
  const parsed = schema.safeParse(query, { reportInput: true });
  if (!parsed.success) {
    const unknownKey = (key: string) => `query: unknown parameter "${key}"${didYouMean(key, parameters)} for source ${source} (it takes ${parameters.join(', ')})`;
    issues.push(...fromZodIssues(parsed.error.issues, { base: at, label, display: ['query'], unknownKey }));
  } else if (source === 'markets' && matchesEveryMarket(query)) {
    warnings.push({ path: at, message: `${label}: query: ${EVERY_MARKET}` });
  }
}

const EVERY_MARKET = `it matches every market (thousands): only the first ${MARKETS_PAGE_BUDGET} pages are watched each poll; narrow it with q, category, series_ticker, series_prefix, event_ticker, close_before or min_volume_24h`;

function describeKind(field: string, kind: FieldKind | 'unknown'): string {
  if (kind === 'kpi-value') return `${field} is a KPI value object: use ${field}.value`;
  if (kind === 'ordinal') return `${field} is ordinal`;
  if (kind === 'array') return `${field} is a list`;
  if (kind === 'object') return `${field} is an object`;
  return `${field} is a ${kind}`;
}

// ---------------------------------------------------------------------------------------------
// Helpers

const ENV_REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** What `${NAME}` substitution found: problems, and every string it changed. */
interface Substitution {
  issues: Issue[];
  /** By path key: the string as written in the file, and its value once expanded. */
  expanded: Map<string, { written: string; value: string }>;
}

/**
 * `${NAME}` in every string value. An unset (or empty) variable, or one of edgewatch's own
 * credentials, is a problem at that value and stays unexpanded.
 */
function substituteEnv(value: unknown, ctx: RuleContext, path: IssuePath, out: Substitution): unknown {
  if (typeof value === 'string') {
    const where = path.length > 0 ? `${formatPath(path)}: ` : '';
    const expanded = value.replace(ENV_REFERENCE, (whole, name: string) => {
      if (ctx.credentials.includes(name)) {
        out.issues.push({ path, message: `${where}\${${name}} is edgewatch's own credential: rule files cannot use it` });
        return whole;
      }
      const replacement = ctx.env[name];
      if (replacement === undefined || replacement === '') {
        out.issues.push({ path, message: `${where}environment variable ${name} is not set (used as \${${name}})` });
        return whole;
      }
      return replacement;
    });
    if (expanded !== value) out.expanded.set(pathKey(path), { written: value, value: expanded });
    return expanded;
  }
  if (Array.isArray(value)) return value.map((item, i) => substituteEnv(item, ctx, [...path, i], out));
  if (isRecord(value)) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, substituteEnv(item, ctx, [...path, key], out)]));
  }
  return value;
}

/**
 * The issue's message with its value, when `${NAME}` expanded it, quoted as written in the file:
 * a problem never shows a variable's value (it may be a secret), wherever it is printed. The
 * value is the string at the issue's path or above it (`to: ${MAIL}` is checked as `to[0]`);
 * messages quote values with JSON.stringify or describeValue, the forms replaced here.
 */
function quoteAsWritten(issue: Issue, expanded: Substitution['expanded']): string {
  const expansion = pathPrefixes(issue.path)
    .map((prefix) => expanded.get(pathKey(prefix)))
    .find((found) => found !== undefined);
  if (expansion === undefined) return issue.message;
  const { written, value } = expansion;
  return issue.message.replaceAll(describeValue(value), describeValue(written)).replaceAll(JSON.stringify(value), JSON.stringify(written));
}

function isOneOf<T extends string>(value: unknown, options: readonly T[]): value is T {
  return typeof value === 'string' && (options as readonly string[]).includes(value);
}

/** A path as a string key for sets and maps. */
function pathKey(path: IssuePath): string {
  return JSON.stringify(path.map(String));
}

/** `a.b` -> the root, `a`, `a.b` */
function pathPrefixes(path: IssuePath): IssuePath[] {
  return Array.from({ length: path.length + 1 }, (_, i) => path.slice(0, i));
}

/** Names longer than this get no suggestion: comparing them costs their length squared. */
const SUGGESTED_NAME_LENGTH = 64;

/** ` (did you mean x?)` when one of `known` is close to `name`. */
function didYouMean(name: string, known: readonly string[]): string {
  if (name.length > SUGGESTED_NAME_LENGTH) return '';
  const lower = name.toLowerCase();
  const close = known.filter((candidate) => {
    const allowed = Math.max(1, Math.floor(candidate.length / 4));
    // The distance is at least the difference in length: most candidates stop here.
    return Math.abs(candidate.length - name.length) <= allowed && editDistance(lower, candidate.toLowerCase()) <= allowed;
  });
  return close.length > 0 ? ` (did you mean ${close.slice(0, 3).join(', ')}?)` : '';
}
