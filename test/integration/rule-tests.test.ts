// Rule unit tests (`edgewatch test`): the shipped tests of the example rules pass (npm test runs them
// through the same function as the command), and a test file's problems are `file:line:column`.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readConfig } from '../../src/config.ts';
import { runRuleTestsCommand } from '../../src/service/rehearse.ts';
import { REPO, runCli } from '../helpers/cli.ts';
import { tempDir, writeRules } from '../helpers/files.ts';

const SHIPPED = path.join(REPO, 'rules/tests');

/** Runs the command's own function; returns its lines and exit code. */
async function runTests(files: string[], env: Record<string, string> = {}): Promise<{ code: number; lines: string[] }> {
  const lines: string[] = [];
  const code = await runRuleTestsCommand(readConfig({ EDGEWATCH_TEMPLATES: path.join(REPO, 'templates'), ...env }), files, { out: (line) => lines.push(line), err: (line) => lines.push(line) });
  return { code, lines };
}

let dir: string;
beforeAll(() => {
  dir = tempDir('edgewatch-rule-tests-');
  writeRules(dir, ['channels:', '  screen: { type: console }', 'rules:', '  - name: edge-over-10', '    source: events', '    trigger: { type: crosses, field: edge_pp, above: 10 }', '    notify: [screen]', ''].join('\n'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('rule unit tests', () => {
  it('every shipped test of the example rules passes', async () => {
    const files = readdirSync(SHIPPED).filter((name) => name.endsWith('.yaml')).map((name) => path.join(SHIPPED, name));
    expect(files.length).toBeGreaterThanOrEqual(4);
    const { code, lines } = await runTests(files);
    expect(lines.filter((line) => !line.startsWith('ok '))).toEqual([expect.stringMatching(/^\d+ passed, 0 failed$/)]);
    expect(code).toBe(0);
  });

  it('prints a failing test\'s expected and actual alerts side by side; the last line counts; exit 1 (command line)', async () => {
    const file = path.join(dir, 'failing.yaml');
    writeFileSync(
      file,
      ['rule_files: [rules/rules.yaml]', 'tests:', '  - name: wrong step', '    source: events', '    steps:', '      - { KXA: { edge_pp: 1 } }', '      - { KXA: { edge_pp: 11 } }', '    expect:', '      - { rule: edge-over-10, entity: KXA, step: 1 }', '  - name: right', '    source: events', '    steps:', '      - { KXA: { edge_pp: 1 } }', '      - { KXA: { edge_pp: 11 } }', '    expect:', '      - { rule: edge-over-10, entity: KXA, step: 2 }', ''].join('\n'),
    );
    const result = await runCli(['test', file], { EDGEWATCH_DB: path.join(dir, 'db') });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe(
      [
        `FAIL ${file}:3:11: wrong step`,
        '       expected                 actual',
        '     ≠ edge-over-10 KXA step 1  edge-over-10 KXA step 2',
        `ok   ${file}: right`,
        '1 passed, 1 failed',
        '',
      ].join('\n'),
    );
  });

  it('positions an unknown rule, a step that names no entity and an expect step out of range as file:line:column', async () => {
    const file = path.join(dir, 'bad.yaml');
    writeFileSync(
      file,
      ['rule_files: [rules/rules.yaml]', 'tests:', '  - name: bad', '    source: events', '    steps:', '      - { KXA: { edge_pp: 1 } }', '      - {}', '    expect:', '      - { rule: edge-over-1O, entity: KXA, step: 1 }', '      - { rule: edge-over-10, entity: KXA, step: 3 }', ''].join('\n'),
    );
    const { code, lines } = await runTests([file]);
    expect(code).toBe(1);
    expect(lines).toEqual([
      `${file}:7:9: test "bad": step 2 names no entity (write { KEY: { field: value } })`,
      `${file}:9:17: test "bad": unknown rule edge-over-1O in the rule files (rules: edge-over-10)`,
      `${file}:10:50: test "bad": step 3 is out of range (steps 1 to 2)`,
      `FAIL ${file}: not run (1 test counted as failed)`,
      '0 passed, 1 failed',
    ]);
  });

  it('counts an alert inhibited by unless as not fired, and names it under a failing test', async () => {
    const rules = path.join(dir, 'unless');
    mkdirSync(rules, { recursive: true });
    writeFileSync(
      path.join(rules, 'rules.yaml'),
      ['channels:', '  screen: { type: console }', 'rules:', '  - name: sure-edge-over-10', '    source: events', '    trigger: { type: crosses, field: edge_pp, above: 10 }', '    unless: [{ filter: { confidence_score: { lt: 3 } } }]', '    notify: [screen]', ''].join('\n'),
    );
    const file = path.join(dir, 'unless.yaml');
    const steps = ['    steps:', '      - { KXA: { edge_pp: 1, confidence_score: 7 }, KXB: { edge_pp: 1, confidence_score: 2 } }', '      - { KXA: { edge_pp: 11 }, KXB: { edge_pp: 11 } }'];
    writeFileSync(
      file,
      [
        'rule_files: [unless/rules.yaml]',
        'tests:',
        '  - name: the unsure one is inhibited',
        '    source: events',
        ...steps,
        '    expect:',
        '      - { rule: sure-edge-over-10, entity: KXA, step: 2 }',
        '  - name: expects the inhibited one',
        '    source: events',
        ...steps,
        '    expect:',
        '      - { rule: sure-edge-over-10, entity: KXA, step: 2 }',
        '      - { rule: sure-edge-over-10, entity: KXB, step: 2 }',
        '',
      ].join('\n'),
    );
    const { code, lines } = await runTests([file]);
    expect(lines).toEqual([
      `ok   ${file}: the unsure one is inhibited`,
      `FAIL ${file}:10:11: expects the inhibited one`,
      '       expected                      actual',
      '       sure-edge-over-10 KXA step 2  sure-edge-over-10 KXA step 2',
      '     ≠ sure-edge-over-10 KXB step 2',
      '     inhibited by unless, so not fired: sure-edge-over-10 KXB step 2',
      '1 passed, 1 failed',
    ]);
    expect(code).toBe(1);
  });

  it('names a missing rule file and an unknown key where they are written', async () => {
    const file = path.join(dir, 'missing.yaml');
    writeFileSync(file, ['rule_files: [rules/nope.yaml]', 'tests:', '  - name: x', '    source: events', '    steps: [{ KXA: { edge_pp: 1 } }]', '    expcet: []', ''].join('\n'));
    const { lines } = await runTests([file]);
    expect(lines[0]).toMatch(new RegExp(`^${file.replace(/[.\\/]/g, '\\$&')}:6:5: unknown key "expcet"`));
    const fixed = path.join(dir, 'missing2.yaml');
    writeFileSync(fixed, ['rule_files: [rules/nope.yaml]', 'tests:', '  - name: x', '    source: events', '    steps: [{ KXA: { edge_pp: 1 } }]', ''].join('\n'));
    expect((await runTests([fixed])).lines[0]).toBe(`${fixed}:1:14: rule file rules/nope.yaml not found (${path.join(dir, 'rules/nope.yaml')})`);
  });
});
