// Rule files: the keys of an alert's life (for, resolve, unless, explain, overdue, quiet, health)
// parse, and their bad input is a problem at its file:line:column.
import { describe, expect, it } from 'vitest';
import { CREDENTIAL_VARIABLES } from '../../src/config.ts';
import { combineRuleFiles } from '../../src/rules/index.ts';
import { formatProblem, parseRuleFile, type RuleContext } from '../../src/rules/parse.ts';

const CTX: RuleContext = { env: {}, credentials: CREDENTIAL_VARIABLES, templates: new Set(), transports: { slack: false, email: false } };

/** The console channel `screen`, then the lines given (the first is line 4). */
const file = (...lines: string[]): string => ['channels:', '  screen: { type: console }', 'rules:', ...lines, ''].join('\n');
const problems = (text: string): string[] => parseRuleFile(text, 'rules/x.yaml', CTX).problems.map(formatProblem);

const EDGE = ['  - name: edge', '    source: events', '    trigger: { type: crosses, field: edge_pp, above: 10 }', '    notify: [screen]'];

describe('alert life keys in rule files', () => {
  it('parses for, resolve, unless, explain, overdue, quiet and health', () => {
    const text = [
      'health: { notify: [screen], after: 5 }',
      'channels:',
      '  screen: { type: console, quiet: { from: "22:00", to: "07:00", timezone: Europe/London, days: [mon, fri] } }',
      'rules:',
      ...EDGE,
      '    for: 15m',
      '    resolve: true',
      '    unless:',
      '      - { source: reports, filter: { trust_label: [Avoid] } }',
      '      - { filter: { confidence_score: { lt: 3 } } }',
      '    explain: { agent: svc-agent, ask: "Why {{ title }}?" }',
      '  - name: late',
      '    source: kpis',
      '    trigger: { type: overdue, field: actual, due: expected_report_date, grace: 1d }',
      '    resolve: true',
      '    notify: [screen]',
      '',
    ].join('\n');
    const parsed = parseRuleFile(text, 'rules/x.yaml', CTX);
    expect(parsed.problems).toEqual([]);
    const [edge, late] = parsed.rules;
    expect(edge).toMatchObject({ forMs: 900_000, resolve: true, explain: { agent: 'svc-agent', timeoutMs: 30_000 } });
    expect(edge!.unless).toHaveLength(2);
    expect(late!.trigger).toEqual({ type: 'overdue', field: 'actual', due: 'expected_report_date', graceMs: 86_400_000 });
    expect(parsed.health).toEqual({ notify: ['screen'], after: 5 });
    expect(parsed.channels[0]).toMatchObject({ quiet: { from: '22:00', to: '07:00', timezone: 'Europe/London', days: ['mon', 'fri'] } });
  });

  it.each([
    {
      name: 'for on a trigger other than crosses',
      text: file('  - name: m', '    source: events', '    trigger: { type: moves, field: edge_pp, by: 2 }', '    notify: [screen]', '    for: 10m'),
      expected: 'rules/x.yaml:8:10: rule "m": for: for (dwell) is only for crosses triggers, not moves',
    },
    {
      name: 'resolve on a trigger other than crosses and overdue',
      text: file('  - name: n', '    source: events', '    trigger: { type: new }', '    notify: [screen]', '    resolve: true'),
      expected: 'rules/x.yaml:8:14: rule "n": resolve: resolve is only for crosses and overdue triggers, not new',
    },
    {
      name: 'an unless source that cannot be related',
      text: file(...EDGE, '    unless: [{ source: kpis, filter: { status: active } }]'),
      expected: 'rules/x.yaml:8:24: rule "edge": unless[0]: source kpis cannot be related to events (sources are related by event ticker: events, reports, runs)',
    },
    {
      name: 'an unless filter field unknown to its source',
      text: file(...EDGE, '    unless: [{ source: reports, filter: { trust_lable: Avoid } }]'),
      expected: /^rules\/x\.yaml:8:43: rule "edge": unless\[0\]: filter: .*trust_lable/,
    },
    {
      name: 'an unknown agent field',
      text: file(...EDGE, '    explain: { agent: svc-agent, ask: "Why?", model: x }'),
      expected: 'rules/x.yaml:8:47: rule "edge": explain: unknown key "model" (its keys: agent, ask, timeout)',
    },
    {
      name: 'an explain without its question',
      text: file(...EDGE, '    explain: { agent: svc-agent }'),
      expected: 'rules/x.yaml:8:14: rule "edge": missing explain.ask',
    },
    {
      name: 'a quiet window with a bad time',
      text: ['channels:', '  screen: { type: console, quiet: { from: "25:00", to: "07:00" } }', ''].join('\n'),
      expected: 'rules/x.yaml:2:43: channel "screen": quiet.from: not a time of day (write HH:MM, 00:00 to 23:59): string "25:00"',
    },
    {
      name: 'a quiet window with a bad zone',
      text: ['channels:', '  screen: { type: console, quiet: { from: "22:00", to: "07:00", timezone: Mars/Olympus } }', ''].join('\n'),
      expected: 'rules/x.yaml:2:75: channel "screen": quiet.timezone: unknown timezone "Mars/Olympus" (an IANA name such as Europe/London)',
    },
    {
      name: 'a quiet window with a bad day',
      text: ['channels:', '  screen: { type: console, quiet: { from: "22:00", to: "07:00", days: [monday] } }', ''].join('\n'),
      expected: 'rules/x.yaml:2:72: channel "screen": quiet.days[0]: unknown day "monday" (sun, mon, tue, wed, thu, fri, sat)',
    },
    {
      name: 'a health channel that does not exist',
      text: ['health: { notify: [ops] }', 'channels:', '  screen: { type: console }', ''].join('\n'),
      expected: 'rules/x.yaml:1:20: health: unknown channel "ops" in notify (channels: screen)',
    },
    {
      name: 'an overdue due field unknown to its source',
      text: file('  - name: late', '    source: kpis', '    trigger: { type: overdue, field: actual, due: expected_date }', '    notify: [screen]'),
      expected: /^rules\/x\.yaml:6:51: rule "late": trigger: due: .*expected_date/,
    },
  ])('$name', ({ text, expected }) => {
    const [first, ...rest] = problems(text);
    if (typeof expected === 'string') expect(first).toBe(expected);
    else expect(first).toMatch(expected);
    expect(rest).toEqual([]);
  });

  it('health is declared in one file only', () => {
    const set = combineRuleFiles(
      [
        { file: 'rules/a.yaml', text: 'health: { notify: [screen] }\nchannels:\n  screen: { type: console }\n' },
        { file: 'rules/b.yaml', text: 'health: { notify: [screen], after: 2 }\n' },
      ],
      CTX,
    );
    expect(set.problems.map(formatProblem)).toEqual(['rules/b.yaml:1:1: health is already declared at rules/a.yaml:1:1 (one file declares it)']);
    expect(set.health).toEqual({ notify: ['screen'], after: 3 });
  });
});
