import { describe, expect, it } from 'vitest';
import { parseDocument, visit } from 'yaml';
import { CREDENTIAL_VARIABLES } from '../../src/config.ts';
import { formatProblem, parseRuleFile, type RuleContext } from '../../src/rules/parse.ts';

/** Values of variables that no problem may ever show. */
const SECRETS = {
  EDGEWATCH_API_KEY: 'sk-live-api-key-0123456789',
  SLACK_BOT_TOKEN: 'xoxb-slack-token-0123456789',
  SMTP_URL: 'smtp://mailer:mail-password-0123@smtp.example.com:587',
  EDGEWATCH_DB: 'postgres://edgewatch:db-password-0123@db.example.com/edgewatch',
  SOURCE: 'sk-live-source-secret',
  RULE_NAME: 'Sk_Live_Rule_Secret',
  CHANNEL: 'sk-live-channel-secret',
  MAIL_TO: 'sk-live-mail-secret',
};
const CTX: RuleContext = {
  env: { PIPELINE_SECRET: 'whsec_' + Buffer.alloc(32, 7).toString('base64'), ...SECRETS },
  credentials: CREDENTIAL_VARIABLES,
  templates: new Set(['edge']),
  transports: { slack: false, email: false },
};
const SECRET_24 = 'whsec_' + Buffer.alloc(24, 1).toString('base64');
const SECRET_65 = 'whsec_' + Buffer.alloc(65, 1).toString('base64');
const SECRET_16 = 'whsec_' + Buffer.alloc(16, 1).toString('base64');

/** A file with the console channel, then the rule lines given (the first rule line is line 4). */
function withRule(...lines: string[]): string {
  return ['channels:', '  screen: { type: console }', 'rules:', ...lines, ''].join('\n');
}

/** The usual rule with one line replaced or added (lines 4-7: name, source, trigger, notify). */
function rule(overrides: { name?: string; source?: string; trigger?: string; notify?: string; extra?: string[] }): string {
  return withRule(
    `  - name: ${overrides.name ?? 'edge-rule'}`,
    `    source: ${overrides.source ?? 'events'}`,
    `    trigger: ${overrides.trigger ?? '{ type: crosses, field: edge_pp, above: 10 }'}`,
    `    notify: ${overrides.notify ?? '[screen]'}`,
    ...(overrides.extra ?? []),
  );
}

function channel(...lines: string[]): string {
  return ['channels:', ...lines, ''].join('\n');
}

interface Case {
  name: string;
  text: string;
  ctx?: Partial<RuleContext>;
  line: number;
  column: number;
  message: string | RegExp;
  /** Problems expected in all (the one checked comes first); 1 unless told. */
  count?: number;
}

const cases: Case[] = [
  // The file itself
  { name: 'invalid YAML', text: 'rules:\n  - name: x\n    source: events: kpis\n', line: 3, column: 13, message: /^invalid YAML: / },
  { name: 'duplicate key', text: 'channels:\n  a: { type: console }\n  a: { type: console }\n', line: 3, column: 3, message: /^invalid YAML: Map keys must be unique/ },
  { name: 'not a map', text: '- a\n- b\n', line: 1, column: 1, message: 'a rule file is a map with the keys channels, rules, health, watchlists and baskets, not a list' },
  { name: 'unknown top-level key', text: 'channels: {}\nrule: []\n', line: 2, column: 1, message: 'unknown top-level key "rule" (did you mean rules?) (a rule file has channels, rules, health, watchlists and baskets)' },
  { name: 'rules not a list', text: 'rules:\n  name: x\n', line: 2, column: 3, message: 'rules: expected a list, got a map' },
  // Rules: keys and names
  { name: 'unknown key in a rule', text: rule({ extra: ['    severty: warning'] }), line: 8, column: 5, message: 'rule "edge-rule": unknown key "severty" (did you mean severity?) (a rule has name, description, source, trigger, filter, notify, severity, cooldown, digest, template, for, resolve, unless, explain, watchlist, query, basket)' },
  { name: 'bad rule name', text: rule({ name: 'Edge_Rule' }), line: 4, column: 11, message: 'rule "Edge_Rule": name: bad rule name "Edge_Rule": use lower-case letters, digits and dashes' },
  { name: 'missing name', text: withRule('  - source: events', '    trigger: { type: new }', '    notify: [screen]'), line: 4, column: 5, message: 'rules[0]: missing name' },
  { name: 'wrong type', text: rule({ extra: ['    severity: [warning]'] }), line: 8, column: 15, message: /^rule "edge-rule": severity: unknown severity/ },
  { name: 'wrong type: description', text: rule({ extra: ['    description: 12'] }), line: 8, column: 18, message: 'rule "edge-rule": description: expected string, got number 12' },
  { name: 'unknown source', text: rule({ source: 'eventz' }), line: 5, column: 13, message: 'rule "edge-rule": source: unknown source "eventz" (events, kpis, reports, runs, edge, rankings, markets, similar, baskets)' },
  { name: 'empty notify', text: rule({ notify: '[]' }), line: 7, column: 13, message: 'rule "edge-rule": notify: needs at least one channel' },
  { name: 'unknown channel in notify', text: rule({ notify: '[screen, scren]' }), line: 7, column: 22, message: 'rule "edge-rule": unknown channel "scren" in notify (did you mean screen?) (channels: screen)' },
  { name: 'unknown template', text: rule({ extra: ['    template: edgy'] }), line: 8, column: 15, message: 'rule "edge-rule": unknown template "edgy" (templates: edge)' },
  { name: 'bad cooldown', text: rule({ extra: ['    cooldown: 2 hours'] }), line: 8, column: 15, message: 'rule "edge-rule": cooldown: not a duration (write 30s, 15m, 2h, 1d): string "2 hours"' },
  { name: 'empty cooldown', text: rule({ extra: ['    cooldown:'] }), line: 8, column: 5, message: 'rule "edge-rule": cooldown: not a duration (write 30s, 15m, 2h, 1d): null' },
  // Triggers
  { name: 'unknown trigger type', text: rule({ trigger: '{ type: crossed, field: edge_pp }' }), line: 6, column: 22, message: 'rule "edge-rule": unknown trigger type "crossed" (crosses, moves, flips, changes, drops, rises, appears, new, overdue, added)' },
  { name: 'missing trigger', text: withRule('  - name: x', '    source: events', '    notify: [screen]'), line: 4, column: 5, message: 'rule "x": missing trigger' },
  { name: 'crosses with both above and below', text: rule({ trigger: '{ type: crosses, field: edge_pp, above: 10, below: 2 }' }), line: 6, column: 14, message: 'rule "edge-rule": trigger: crosses needs exactly one of above and below' },
  { name: 'crosses with neither', text: rule({ trigger: '{ type: crosses, field: edge_pp }' }), line: 6, column: 14, message: 'rule "edge-rule": trigger: crosses needs exactly one of above and below' },
  { name: 'negative rearm', text: rule({ trigger: '{ type: crosses, field: edge_pp, above: 10, rearm: -1 }' }), line: 6, column: 65, message: 'rule "edge-rule": trigger.rearm: must be 0 or more' },
  { name: 'threshold not a number', text: rule({ trigger: '{ type: crosses, field: edge_pp, above: ten }' }), line: 6, column: 54, message: 'rule "edge-rule": trigger.above: expected number, got string "ten"' },
  { name: 'rearm on moves', text: rule({ trigger: '{ type: moves, field: edge_pp, by: 5, rearm: 2 }' }), line: 6, column: 52, message: 'rule "edge-rule": trigger: rearm is only for crosses triggers (a moves trigger has type, field, by, direction)' },
  { name: 'abs on drops', text: rule({ trigger: '{ type: drops, field: confidence_score, abs: true }' }), line: 6, column: 54, message: /^rule "edge-rule": trigger: abs is only for crosses triggers/ },
  { name: 'moves by 0', text: rule({ trigger: '{ type: moves, field: edge_pp, by: 0 }' }), line: 6, column: 49, message: 'rule "edge-rule": trigger.by: must be greater than 0' },
  { name: 'moves without by', text: rule({ trigger: '{ type: moves, field: edge_pp }' }), line: 6, column: 14, message: 'rule "edge-rule": missing trigger.by' },
  { name: 'flips to not boolean', text: rule({ source: 'kpis', trigger: '{ type: flips, field: near_settled, to: yes }' }), line: 6, column: 54, message: 'rule "edge-rule": trigger.to: expected boolean, got string "yes"' },
  { name: 'unknown key in a trigger', text: rule({ source: 'runs', trigger: '{ type: changes, field: status, too: x }' }), line: 6, column: 46, message: 'rule "edge-rule": trigger: unknown key "too" in a changes trigger (it has type, field, from, to)' },
  { name: 'drops to_at_most not in the order', text: rule({ source: 'reports', trigger: '{ type: drops, field: trust_label, to_at_most: Bad }' }), line: 6, column: 61, message: 'rule "edge-rule": trigger: to_at_most must be one of Strong, Good, Caution, High Risk, Avoid (the order of trust_label, best first), not string "Bad"' },
  { name: 'rises to_at_least not a number on a numeric field', text: rule({ trigger: '{ type: rises, field: confidence_score, to_at_least: high }' }), line: 6, column: 67, message: 'rule "edge-rule": trigger: to_at_least must be a number for the numeric field confidence_score' },
  { name: 'drops on a text field', text: rule({ trigger: '{ type: drops, field: name }' }), line: 6, column: 36, message: /^rule "edge-rule": trigger: drops needs an ordinal field .*; name is a string$/ },
  { name: 'drops by fractional steps on an ordinal', text: rule({ source: 'kpis', trigger: '{ type: drops, field: liquidity_tier, by: 1.5 }' }), line: 6, column: 56, message: 'rule "edge-rule": trigger: by counts steps of the order of liquidity_tier: a whole number' },
  { name: 'flips on a number', text: rule({ trigger: '{ type: flips, field: edge_pp }' }), line: 6, column: 36, message: 'rule "edge-rule": trigger: flips needs a boolean field; edge_pp is a number' },
  { name: 'crosses on a KPI value object', text: rule({ source: 'kpis', trigger: '{ type: crosses, field: actual, above: 1 }' }), line: 6, column: 38, message: 'rule "edge-rule": trigger: crosses needs a numeric field; actual is a KPI value object: use actual.value' },
  { name: 'unknown field', text: rule({ trigger: '{ type: crosses, field: edge, above: 10 }' }), line: 6, column: 38, message: 'rule "edge-rule": trigger: unknown field "edge" for source events (did you mean edge_pp, abs_edge_pp?)' },
  { name: 'unknown field far from any', text: rule({ source: 'runs', trigger: '{ type: changes, field: zzzzzzzz }' }), line: 6, column: 38, message: 'rule "edge-rule": trigger: unknown field "zzzzzzzz" for source runs (known fields: event_ticker, requested_url, run_id, status, title, trust_label, venue)' },
  { name: 'unknown field inside a KPI value', text: rule({ source: 'kpis', trigger: '{ type: crosses, field: actual.amount, above: 1 }' }), line: 6, column: 38, message: 'rule "edge-rule": trigger: unknown field "actual.amount" for source kpis: actual is a KPI value with value, unit and formatted' },
  { name: 'dotted path into a scalar', text: rule({ trigger: '{ type: crosses, field: edge_pp.value, above: 1 }' }), line: 6, column: 38, message: 'rule "edge-rule": trigger: unknown field "edge_pp.value" for source events: edge_pp is a number, not an object' },
  { name: 'unknown field with other trigger problems', text: rule({ trigger: '{ type: moves, field: edgepp, by: -1 }' }), line: 6, column: 36, message: /unknown field "edgepp" for source events \(did you mean edge_pp/, count: 2 },
  // Filters
  { name: 'unknown filter operator', text: rule({ extra: ['    filter:', '      confidence_score: { gte: 6, atleast: 7 }'] }), line: 9, column: 35, message: 'rule "edge-rule": filter.confidence_score: unknown operator "atleast" (gt, gte, lt, lte, eq, ne, in, not_in, contains)' },
  { name: 'filter comparison on a string', text: rule({ extra: ['    filter:', '      confidence_score: { gte: "6" }'] }), line: 9, column: 32, message: 'rule "edge-rule": filter.confidence_score.gte: expected a number, got string "6"' },
  { name: 'filter in without a list', text: rule({ extra: ['    filter:', '      event_ticker: { in: KXFED }'] }), line: 9, column: 27, message: 'rule "edge-rule": filter.event_ticker.in: expected a list, got string "KXFED"' },
  { name: 'filter on an unknown field', text: rule({ extra: ['    filter:', '      series: politics'] }), line: 9, column: 7, message: 'rule "edge-rule": filter: unknown field "series" for source events (did you mean series_category?)' },
  { name: 'filter not a map', text: rule({ extra: ['    filter: [politics]'] }), line: 8, column: 13, message: 'rule "edge-rule": filter: expected a map of field: condition, got a list' },
  // Digests
  { name: 'digest with cron and window', text: rule({ extra: ['    digest: { cron: "0 18 * * *", window: 1h }'] }), line: 8, column: 13, message: 'rule "edge-rule": digest: a digest takes either cron or window, not both' },
  { name: 'digest with neither', text: rule({ extra: ['    digest: {}'] }), line: 8, column: 13, message: 'rule "edge-rule": digest: a digest takes either cron or window, not both (it has neither)' },
  { name: 'bad cron', text: rule({ extra: ['    digest: { cron: "0 25 * * *" }'] }), line: 8, column: 21, message: 'rule "edge-rule": digest.cron: not a cron expression: "0 25 * * *" (the hour field takes 0-23)' },
  { name: 'cron with too few fields', text: rule({ extra: ['    digest: { cron: "0 18 * *" }'] }), line: 8, column: 21, message: 'rule "edge-rule": digest.cron: not a cron expression of 5 fields: "0 18 * *"' },
  { name: 'bad timezone', text: rule({ extra: ['    digest: { cron: "0 18 * * *", timezone: Mars/Olympus }'] }), line: 8, column: 45, message: 'rule "edge-rule": digest.timezone: unknown timezone "Mars/Olympus"' },
  { name: 'bad digest window', text: rule({ extra: ['    digest:', '      window: soon'] }), line: 9, column: 15, message: 'rule "edge-rule": digest.window: not a duration (write 30s, 15m, 2h, 1d): string "soon"' },
  { name: 'unknown key in digest', text: rule({ extra: ['    digest: { window: 1h, every: 2h }'] }), line: 8, column: 27, message: 'rule "edge-rule": unknown key "every" in digest (its keys: cron, timezone, window)' },
  // Channels
  { name: 'unknown channel type', text: channel('  x:', '    type: pager'), line: 3, column: 11, message: 'channel "x": unknown channel type "pager" (slack, email, webhook, console)' },
  { name: 'channel without type', text: channel('  x: { to: [a@b.c] }'), line: 2, column: 6, message: 'channel "x": missing type (slack, email, webhook, console)' },
  { name: 'unknown key in a channel', text: channel('  x:', '    type: console', '    colour: red'), line: 4, column: 5, message: 'channel "x": unknown key "colour" in a console channel (its keys: type, quiet)' },
  { name: 'slack without SLACK_BOT_TOKEN', text: channel('  trading:', '    type: slack', '    channel: "#pm"'), line: 3, column: 11, message: 'channel "trading": slack needs SLACK_BOT_TOKEN' },
  { name: 'slack without channel', text: channel('  trading: { type: slack }'), ctx: { transports: { slack: true, email: false } }, line: 2, column: 12, message: 'channel "trading": missing channel' },
  { name: 'email without SMTP_URL', text: channel('  me:', '    type: email', '    to: [a@example.com]'), line: 3, column: 11, message: 'channel "me": email needs SMTP_URL' },
  { name: 'email to not an address', text: channel('  me:', '    type: email', '    to: [a@example.com, analyst]'), ctx: { transports: { slack: false, email: true } }, line: 4, column: 25, message: 'channel "me": to[1]: not an email address: "analyst"' },
  { name: 'webhook url not http', text: channel('  hook:', '    type: webhook', '    url: ftp://example.com/x'), line: 4, column: 10, message: 'channel "hook": url: must be an http:// or https:// URL' },
  { name: 'webhook secret without whsec_', text: channel('  hook:', '    type: webhook', '    url: https://example.com', '    secret: c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0'), line: 5, column: 13, message: 'channel "hook": secret: must be whsec_ followed by standard base64 of 24 to 64 bytes' },
  { name: 'webhook secret too short', text: channel('  hook:', '    type: webhook', '    url: https://example.com', `    secret: ${SECRET_16}`), line: 5, column: 13, message: 'channel "hook": secret: must be whsec_ followed by standard base64 of 24 to 64 bytes' },
  { name: 'webhook secret too long', text: channel('  hook:', '    type: webhook', '    url: https://example.com', `    secret: ${SECRET_65}`), line: 5, column: 13, message: 'channel "hook": secret: must be whsec_ followed by standard base64 of 24 to 64 bytes' },
  { name: 'webhook secret in url-safe base64', text: channel('  hook:', '    type: webhook', '    url: https://example.com', '    secret: whsec_-_-_-_-_-_-_-_-_-_-_-_-_-_-_-_-_-_-_-_-_-_-_-_'), line: 5, column: 13, message: 'channel "hook": secret: must be whsec_ followed by standard base64 of 24 to 64 bytes' },
  { name: 'webhook content-type header', text: channel('  hook:', '    type: webhook', '    url: https://example.com', '    headers:', '      X-Team: research', '      content-TYPE: text/plain'), line: 7, column: 7, message: /^channel "hook": header "content-TYPE" cannot be set here/ },
  { name: 'webhook webhook-* header', text: channel('  hook:', '    type: webhook', '    url: https://example.com', '    headers: { Webhook-Signature: x }'), line: 5, column: 16, message: /^channel "hook": header "Webhook-Signature" cannot be set here/ },
  { name: 'unset environment variable', text: channel('  hook:', '    type: webhook', '    url: https://example.com', '    secret: ${MISSING_SECRET}'), line: 5, column: 13, message: 'channels.hook.secret: environment variable MISSING_SECRET is not set (used as ${MISSING_SECRET})' },
  { name: 'environment variable set to empty', text: channel('  hook:', '    type: webhook', '    url: ${HOOK_URL}'), ctx: { env: { HOOK_URL: '' } }, line: 4, column: 10, message: 'channels.hook.url: environment variable HOOK_URL is not set (used as ${HOOK_URL})' },
  // Webhook headers that could never be sent, or would change the connection
  { name: 'webhook header name with a line break', text: channel('  hook:', '    type: webhook', '    url: https://example.com', '    headers:', '      "X-Team\\r\\nX-Injected": evil'), line: 6, column: 7, message: 'channel "hook": header "X-Team\\r\\nX-Injected": not an HTTP header name (letters, digits and !#$%&\'*+-.^_`|~ only)' },
  { name: 'webhook header name with a space', text: channel('  hook:', '    type: webhook', '    url: https://example.com', '    headers: { "X Team": research }'), line: 5, column: 16, message: /^channel "hook": header "X Team": not an HTTP header name/ },
  { name: 'webhook header value with a line break', text: channel('  hook:', '    type: webhook', '    url: https://example.com', '    headers:', '      X-Team: "research\\r\\nX-Injected: evil"'), line: 6, column: 15, message: 'channel "hook": header "X-Team": the value holds a line break, a control character or a character beyond Latin-1, which HTTP headers cannot carry' },
  { name: 'webhook header value with a line break from the environment', text: channel('  hook:', '    type: webhook', '    url: https://example.com', '    headers: { Authorization: "Bearer ${HOOK_TOKEN}" }'), ctx: { env: { HOOK_TOKEN: 'tok\r\nX-Injected: 1' } }, line: 5, column: 31, message: /^channel "hook": header "Authorization": the value holds a line break/ },
  ...['Transfer-Encoding', 'Host', 'Content-Length', 'Connection', 'Keep-Alive', 'Upgrade', 'TE', 'Trailer', 'Expect', 'Proxy-Authorization', 'proxy-connection'].map((header) => ({
    name: `webhook ${header} header`,
    text: channel('  hook:', '    type: webhook', '    url: https://example.com', `    headers: { ${header}: x }`),
    line: 5,
    column: 16,
    message: `channel "hook": header "${header}" cannot be set here (Host, Content-Length, Transfer-Encoding, Connection, Keep-Alive, Upgrade, TE, Trailer, Expect and Proxy-* belong to the HTTP connection)`,
  })),
  // edgewatch's own credentials: never expanded in a rule file, set or not
  { name: 'API key in a webhook URL', text: channel('  hook:', '    type: webhook', '    url: https://example.com/?k=${EDGEWATCH_API_KEY}'), line: 4, column: 10, message: "channels.hook.url: ${EDGEWATCH_API_KEY} is edgewatch's own credential: rule files cannot use it" },
  { name: 'API key in a webhook header', text: channel('  hook:', '    type: webhook', '    url: https://example.com', '    headers:', '      Authorization: Bearer ${EDGEWATCH_API_KEY}'), line: 6, column: 22, message: "channels.hook.headers.Authorization: ${EDGEWATCH_API_KEY} is edgewatch's own credential: rule files cannot use it" },
  { name: 'Slack token in a webhook URL', text: channel('  hook:', '    type: webhook', '    url: https://example.com/${SLACK_BOT_TOKEN}'), line: 4, column: 10, message: "channels.hook.url: ${SLACK_BOT_TOKEN} is edgewatch's own credential: rule files cannot use it" },
  { name: 'SMTP URL in a webhook header', text: channel('  hook:', '    type: webhook', '    url: https://example.com', '    headers: { X-Mail: "${SMTP_URL}" }'), line: 5, column: 24, message: "channels.hook.headers.X-Mail: ${SMTP_URL} is edgewatch's own credential: rule files cannot use it" },
  { name: 'database URL (with its password) in a rule', text: rule({ extra: ['    description: "${EDGEWATCH_DB}"'] }), line: 8, column: 18, message: "rules[0].description: ${EDGEWATCH_DB} is edgewatch's own credential: rule files cannot use it" },
  { name: 'API key, even when unset', text: channel('  hook:', '    type: webhook', '    url: https://example.com/?k=${EDGEWATCH_API_KEY}'), ctx: { env: {} }, line: 4, column: 10, message: "channels.hook.url: ${EDGEWATCH_API_KEY} is edgewatch's own credential: rule files cannot use it" },
  // Values from the environment are quoted as written, never as expanded
  { name: 'unknown source from the environment', text: rule({ source: '${SOURCE}' }), line: 5, column: 13, message: 'rule "edge-rule": source: unknown source "${SOURCE}" (events, kpis, reports, runs, edge, rankings, markets, similar, baskets)' },
  { name: 'bad rule name from the environment', text: rule({ name: '${RULE_NAME}' }), line: 4, column: 11, message: 'rule "${RULE_NAME}": name: bad rule name "${RULE_NAME}": use lower-case letters, digits and dashes' },
  { name: 'unknown channel from the environment', text: rule({ notify: '[screen, "${CHANNEL}"]' }), line: 7, column: 22, message: 'rule "edge-rule": unknown channel "${CHANNEL}" in notify (channels: screen)' },
  { name: 'not an email address from the environment', text: channel('  me:', '    type: email', '    to: ["${MAIL_TO}"]'), ctx: { transports: { slack: false, email: true } }, line: 4, column: 10, message: 'channel "me": to[0]: not an email address: "${MAIL_TO}"' },
];

describe('parseRuleFile problems: one per case, at the right place', () => {
  it.each(cases)('$name', ({ text, ctx, line, column, message, count }) => {
    const result = parseRuleFile(text, 'rules/x.yaml', { ...CTX, ...ctx });
    expect(result.problems.map(formatProblem)).toHaveLength(count ?? 1);
    const [problem] = result.problems;
    expect(problem).toMatchObject({ file: 'rules/x.yaml', line, column });
    if (typeof message === 'string') expect(problem!.message).toBe(message);
    else expect(problem!.message).toMatch(message);
    for (const secret of Object.values(SECRETS)) expect(result.problems.map(formatProblem).join('\n')).not.toContain(secret);
    // An entry with a problem is never returned as valid.
    expect(result.rules).toEqual([]);
    if (!text.includes('rules:')) expect(result.channels).toEqual([]);
  });
});

describe('parseRuleFile: valid files', () => {
  const text = [
    'channels:',
    '  screen: { type: console }',
    '  pipeline:',
    '    type: webhook',
    '    url: https://example.com/hooks/${TEAM}',
    '    secret: ${PIPELINE_SECRET}',
    '    headers: { X-Team: research }',
    'rules:',
    '  - name: politics-edge-over-10',
    '    description: Edge above 10 pp on politics events',
    '    source: events',
    '    trigger: { type: crosses, field: edge_pp, above: 10, abs: true, rearm: 2 }',
    '    filter:',
    '      series_category: politics',
    '      confidence_score: { gte: 6, lt: 10 }',
    '      event_ticker: [KXFED-25DEC, KXCPI-25NOV]',
    '    notify: [screen, pipeline]',
    '    severity: warning',
    '    cooldown: 2h',
    '    digest: { cron: "0 18 * * *", timezone: UTC }',
    '    template: edge',
    '  - name: trust-drop',
    '    source: reports',
    '    trigger: { type: drops, field: trust_label, to_at_most: caution }',
    '    notify: [screen]',
    '    digest: { window: 15m }',
    '  - name: moves-any',
    '    source: kpis',
    '    trigger: { type: moves, field: market_implied.value, by: 0.5 }',
    '    notify: [screen]',
    '  - name: research-evidence',
    '    source: events',
    '    trigger: { type: rises, field: research.evidence.0.grade, to_at_least: 3 }',
    '    notify: [screen]',
    '',
  ].join('\n');
  const secret = CTX.env.PIPELINE_SECRET!;
  const result = parseRuleFile(text, 'rules/all.yaml', { ...CTX, env: { ...CTX.env, TEAM: 'research' } });

  it('has no problems', () => {
    expect(result.problems.map(formatProblem)).toEqual([]);
  });

  it('channels, with ${NAME} substituted', () => {
    expect(result.channels).toEqual([
      { type: 'console', name: 'screen' },
      { type: 'webhook', name: 'pipeline', url: 'https://example.com/hooks/research', secret, headers: { 'X-Team': 'research' } },
    ]);
  });

  it('rules, with defaults filled and positions', () => {
    expect(result.rules).toEqual([
      {
        name: 'politics-edge-over-10',
        description: 'Edge above 10 pp on politics events',
        source: 'events',
        trigger: { type: 'crosses', field: 'edge_pp', above: 10, abs: true, rearm: 2 },
        filter: [
          { field: 'series_category', conditions: [{ op: 'eq', value: 'politics' }] },
          { field: 'confidence_score', conditions: [{ op: 'gte', value: 6 }, { op: 'lt', value: 10 }] },
          { field: 'event_ticker', conditions: [{ op: 'in', value: ['KXFED-25DEC', 'KXCPI-25NOV'] }] },
        ],
        notify: ['screen', 'pipeline'],
        severity: 'warning',
        cooldownMs: 7_200_000,
        digest: { cron: '0 18 * * *', timezone: 'UTC' },
        template: 'edge',
        file: 'rules/all.yaml',
        line: 9,
      },
      {
        name: 'trust-drop',
        source: 'reports',
        trigger: { type: 'drops', field: 'trust_label', by: 1, to_at_most: 'caution' },
        filter: [],
        notify: ['screen'],
        severity: 'info',
        digest: { windowMs: 900_000 },
        file: 'rules/all.yaml',
        line: 22,
      },
      {
        name: 'moves-any',
        source: 'kpis',
        trigger: { type: 'moves', field: 'market_implied.value', by: 0.5, direction: 'any' },
        filter: [],
        notify: ['screen'],
        severity: 'info',
        file: 'rules/all.yaml',
        line: 27,
      },
      {
        name: 'research-evidence',
        source: 'events',
        trigger: { type: 'rises', field: 'research.evidence.0.grade', by: 1, to_at_least: 3 },
        filter: [],
        notify: ['screen'],
        severity: 'info',
        file: 'rules/all.yaml',
        line: 31,
      },
    ]);
  });

  it.each([
    { name: 'empty file', text: '' },
    { name: 'comments only', text: '# nothing yet\n' },
    { name: 'empty keys', text: 'channels:\nrules:\n' },
  ])('$name: nothing, no problem', ({ text: empty }) => {
    expect(parseRuleFile(empty, 'e.yaml', CTX)).toEqual({ channels: [], rules: [], problems: [], warnings: [] });
  });
});

describe('parseRuleFile: several problems', () => {
  it('reports every problem of every entry, sorted by position, and keeps the valid entries', () => {
    const text = [
      'channels:',
      '  screen: { type: console }',
      '  team: { type: slack, channel: "#x" }',
      'rules:',
      '  - name: ok',
      '    source: events',
      '    trigger: { type: new }',
      '    notify: [screen]',
      '  - name: broken',
      '    source: events',
      '    trigger: { type: crosses, field: edge, above: 10 }',
      '    filter: { confidence_score: { atleast: 6 } }',
      '    notify: [team]',
      '    cooldown: soon',
      '',
    ].join('\n');
    const result = parseRuleFile(text, 'f.yaml', CTX);
    expect(result.problems.map((p) => [p.line, p.column])).toEqual([
      [3, 17],
      [11, 38],
      [12, 35],
      [14, 15],
    ]);
    expect(result.channels.map((c) => c.name)).toEqual(['screen']);
    expect(result.rules.map((r) => r.name)).toEqual(['ok']);
  });

  it('a rule naming an invalid channel is dropped without a second problem', () => {
    const text = ['channels:', '  team: { type: slack, channel: "#x" }', 'rules:', '  - { name: a, source: events, trigger: { type: new }, notify: [team] }', ''].join('\n');
    const result = parseRuleFile(text, 'f.yaml', CTX);
    expect(result.problems.map(formatProblem)).toEqual(['f.yaml:2:17: channel "team": slack needs SLACK_BOT_TOKEN']);
    expect(result.rules).toEqual([]);
  });

  it('duplicate rule names in one file', () => {
    const text = withRule('  - { name: a, source: events, trigger: { type: new }, notify: [screen] }', '  - { name: a, source: kpis, trigger: { type: new }, notify: [screen] }');
    const result = parseRuleFile(text, 'f.yaml', CTX);
    expect(result.problems.map(formatProblem)).toEqual(['f.yaml:5:13: rule "a" is already defined at f.yaml:4:13']);
    expect(result.rules.map((r) => r.source)).toEqual(['events']);
  });

  it('never prints a secret', () => {
    const bad = 'whsec_not-base64-but-secret!';
    const text = channel('  hook:', '    type: webhook', '    url: https://example.com', '    secret: ${HOOK_SECRET}');
    const result = parseRuleFile(text, 'f.yaml', { ...CTX, env: { HOOK_SECRET: bad } });
    expect(result.problems).toHaveLength(1);
    expect(formatProblem(result.problems[0]!)).not.toContain('not-base64');
  });

  it.each([
    { name: 'exactly 24 bytes', secret: SECRET_24, ok: true },
    { name: '64 bytes', secret: 'whsec_' + Buffer.alloc(64, 9).toString('base64'), ok: true },
    { name: '16 bytes', secret: SECRET_16, ok: false },
    { name: 'bad padding', secret: SECRET_24 + '=', ok: false },
  ])('webhook secret $name', ({ secret, ok }) => {
    const text = channel('  hook:', '    type: webhook', '    url: https://example.com', `    secret: "${secret}"`);
    expect(parseRuleFile(text, 'f.yaml', CTX).problems).toHaveLength(ok ? 0 : 1);
  });
});

describe('values from the environment are never shown expanded', () => {
  /** Every kind of value a rule file holds; each one in turn is replaced by `${LEAK}`. */
  const base = [
    'channels:',
    '  screen: { type: console }',
    '  trading: { type: slack, channel: "#pm-alerts" }',
    '  me: { type: email, to: [analyst@example.com] }',
    '  team: { type: email, to: team@example.com }',
    '  pipeline:',
    '    type: webhook',
    '    url: https://example.com/hooks',
    `    secret: ${SECRET_24}`,
    '    headers: { X-Team: research }',
    'rules:',
    '  - name: politics-edge',
    '    description: Edge above 10 pp',
    '    source: events',
    '    trigger: { type: crosses, field: edge_pp, above: 10, abs: true, rearm: 2 }',
    '    filter:',
    '      series_category: politics',
    '      confidence_score: { gte: 6 }',
    '      event_ticker: [KXFED-25DEC, KXCPI-25NOV]',
    '    notify: [trading, pipeline]',
    '    severity: warning',
    '    cooldown: 2h',
    '    digest: { cron: "0 18 * * *", timezone: UTC }',
    '    template: edge',
    '  - name: trust-drop',
    '    source: reports',
    '    trigger: { type: drops, field: trust_label, by: 1, to_at_most: Caution }',
    '    notify: [me]',
    '    digest: { window: 15m }',
    '  - name: kpi-moves',
    '    source: kpis',
    '    trigger: { type: moves, field: market_implied.value, by: 0.5, direction: up }',
    '    filter: { near_settled: { ne: true }, liquidity_tier: { in: [high] }, company_name: { contains: Apple } }',
    '    notify: [screen]',
    '  - name: run-finished',
    '    source: runs',
    '    trigger: { type: changes, field: status, from: processing, to: [completed, failed] }',
    '    notify: [screen]',
    '',
  ].join('\n');
  const ctx: RuleContext = { ...CTX, transports: { slack: true, email: true } };

  /** The file once per value (keys stay), with that value replaced by `${LEAK}`. */
  function variants(): string[] {
    const count = (() => {
      let n = 0;
      visit(parseDocument(base), { Scalar: (key) => void (key !== 'key' && n++) });
      return n;
    })();
    return Array.from({ length: count }, (_, target) => {
      const doc = parseDocument(base);
      let n = 0;
      visit(doc, {
        Scalar(key) {
          if (key !== 'key' && n++ === target) return doc.createNode('${LEAK}');
          return undefined;
        },
      });
      return doc.toString();
    });
  }

  // Each value carries the marker xq9 in every word, so that even a piece of it is caught.
  it.each([
    { kind: 'long, with quotes and a backslash', leak: 'Xq9Leak-Value_7f "Xq9Quoted" \\Xq9Back Xq9Tail-padding-past-forty-characters' },
    { kind: 'dotted', leak: 'xq9.secret.path' },
    { kind: 'cron-like', leak: 'Xq9 18 * * *' },
    { kind: 'a valid name', leak: 'xq9-secret' },
  ])('$kind', ({ leak }) => {
    expect(parseRuleFile(base, 'f.yaml', ctx).problems).toEqual([]);
    const texts = variants();
    expect(texts.length).toBeGreaterThan(50);
    let asWritten = 0;
    for (const text of texts) {
      const problems = parseRuleFile(text, 'f.yaml', { ...ctx, env: { ...ctx.env, LEAK: leak } }).problems.map(formatProblem);
      for (const problem of problems) expect(problem.toLowerCase(), text).not.toContain('xq9');
      asWritten += problems.filter((problem) => problem.includes('"${LEAK}"')).length;
    }
    expect(asWritten).toBeGreaterThan(5);
  });
});
