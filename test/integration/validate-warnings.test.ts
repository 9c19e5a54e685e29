// `validate` warnings: valid rule files and templates that are likely mistakes (a filter value the
// API never writes, a template variable the alert view does not have) are printed as `warning:`
// lines, and the exit code stays 0.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CREDENTIAL_VARIABLES } from '../../src/config.ts';
import { compileTemplates } from '../../src/render/index.ts';
import { combineRuleFiles } from '../../src/rules/index.ts';
import { runCli } from '../helpers/cli.ts';
import { tempDir, writeRules } from '../helpers/files.ts';

const ctx = { env: {}, credentials: CREDENTIAL_VARIABLES, templates: new Set<string>(), transports: { slack: false, email: false } };

const rule = (source: string, filter: string) =>
  ['channels:', '  s: { type: console }', 'rules:', '  - name: r', `    source: ${source}`, '    trigger: { type: new }', `    filter: ${filter}`, '    notify: [s]', ''].join('\n');

let dir: string;
beforeAll(() => {
  dir = tempDir('edgewatch-warnings-');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it.each([
  ['events', '{ series_category: Crypto }', 'series_category', 'Crypto', '(politics, crypto, economics, ...): did you mean crypto?'],
  ['events', '{ series_category: Sports }', 'series_category', 'Sports', '(politics, crypto, economics, ...): the API writes it in lower case'],
  ['events', '{ eligibility_status: [open, Paused] }', 'eligibility_status', 'Paused', '(open, paused, unopened, closed, settled, unknown): did you mean paused?'],
  ['kpis', '{ status: { ne: reported } }', 'status', 'reported', '(active, settled)'],
  ['runs', '{ status: { in: [completed, done] } }', 'status', 'done', '(processing, completed, failed)'],
])('warns of a %s filter %s at its value', (source, filter, field, value, known) => {
  const text = rule(source, filter);
  const set = combineRuleFiles([{ file: 'r.yaml', text }], ctx);
  expect(set.problems).toEqual([]);
  expect(set.rules).toHaveLength(1);
  const column = text.split('\n')[6]!.indexOf(value) + 1;
  expect(set.warnings.map((w) => `${w.line}:${w.column}: ${w.message}`)).toEqual([
    `7:${column}: rule "r": filter ${field}: "${value}" is not a value the API writes for ${field} ${known} (a filter compares values exactly)`,
  ]);
});

it.each([
  ['events', '{ series_category: sports, eligibility_status: open }'],
  ['kpis', '{ liquidity_tier: [high, medium], signal: above_market }'],
  ['reports', '{ trust_label: { in: [Good, Caution] } }'],
])('does not warn of %s filter values the API writes: %s', (source, filter) => {
  const set = combineRuleFiles([{ file: 'r.yaml', text: rule(source, filter) }], ctx);
  expect(set.problems).toEqual([]);
  expect(set.warnings).toEqual([]);
});

it('warns of a template variable the alert or digest view does not have, where it is written', () => {
  const compiled = compileTemplates('t', {
    'edge.slack.liquid': '{{ view.titel }} {{ alert.current.edge_pp }}\n{% for c in view.changes %}{{ c.text }}{% endfor %}{{ event.name }}',
    'edge.digest.slack.liquid': '{{ digest.alerts.size }} {{ view.facts }}',
  });
  expect(compiled.ok).toBe(true);
  if (!compiled.ok) return;
  expect(compiled.set.warnings.map((w) => `${w.file}:${w.line}:${w.column}: ${w.message}`)).toEqual([
    expect.stringMatching(/^t\/edge\.slack\.liquid:1:4: "view\.titel": view has no titel \(its fields: id, rule, .*\)$/),
    't/edge.slack.liquid:2:55: "event.name": an alert template is given alert and view, not event',
    expect.stringMatching(/^t\/edge\.digest\.slack\.liquid:1:29: "view\.facts": view has no facts \(its fields: id, rule, title, count, created_at, items\)$/),
  ]);
});

it('prints warnings as `file:line:column: warning: message` and exits 0; the shipped rules and templates have none', async () => {
  const rulesDir = writeRules(dir, rule('events', '{ series_category: Crypto }'));
  const templates = path.join(dir, 'templates');
  mkdirSync(templates);
  writeFileSync(path.join(templates, 'edge.slack.liquid'), '{{ view.titel }}\n');
  const result = await runCli(['validate'], { EDGEWATCH_RULES: rulesDir, EDGEWATCH_TEMPLATES: templates, EDGEWATCH_DB: path.join(dir, 'db') });
  expect(result.code).toBe(0);
  expect(result.stdout.split('\n')).toEqual([
    expect.stringMatching(new RegExp(`^${templates.replace(/[.\\/]/g, '\\$&')}/edge\\.slack\\.liquid:1:4: warning: "view\\.titel": view has no titel`)),
    `${path.join(rulesDir, 'rules.yaml')}:7:32: warning: rule "r": filter series_category: "Crypto" is not a value the API writes for series_category (politics, crypto, economics, ...): did you mean crypto? (a filter compares values exactly)`,
    `1 rule and 1 channel in ${rulesDir}: valid`,
    '',
  ]);
  const shipped = await runCli(['validate'], { EDGEWATCH_DB: path.join(dir, 'db') });
  expect(shipped.stdout).not.toContain('warning:');
  expect(shipped.code).toBe(0);
});
