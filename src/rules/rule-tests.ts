// Rule unit tests (`edgewatch test`): the YAML form of the contract parsed into tests, every problem
// positioned as `file:line:column`, and the expected alerts compared with the actual ones. Pure; the
// runner (service/rule-tests.ts) loads the rule files and replays the steps through the planner.
import { LineCounter, parseDocument } from 'yaml';
import { z } from 'zod';
import { parseDuration } from '../core/duration.ts';
import { SOURCES, type RuleProblem, type SourceName } from '../core/types.ts';
import { isRecord } from '../core/values.ts';
import { createLocator, describeValue, fromZodIssues, toProblems, type Issue, type Position } from './issues.ts';
import type { Rule } from './schema.ts';

/** Time between two steps unless a test says otherwise: the events poll's default interval. */
export const DEFAULT_STEP_INTERVAL = '5m';

const Fields = z.record(z.string(), z.unknown(), { error: (issue) => `expected a map of field: value, got ${describeValue(issue.input)}` });

const RuleTestFileSchema = z.strictObject({
  rule_files: z.array(z.string().min(1)).min(1, { error: 'needs at least one rule file' }),
  tests: z
    .array(
      z.strictObject({
        name: z.string().min(1),
        source: z.enum(SOURCES, { error: (issue) => `unknown source ${JSON.stringify(issue.input)} (${SOURCES.join(', ')})` }),
        interval: z
          .string()
          .refine((text) => parseDuration(text) !== undefined, { error: 'not a duration (write 30s, 15m, 2h, 1d)' })
          .default(DEFAULT_STEP_INTERVAL),
        steps: z
          .array(z.record(z.string(), Fields.nullable()).nullable(), { error: (issue) => `expected a list of steps, got ${describeValue(issue.input)}` })
          .min(1, { error: 'needs at least one step (the first is the baseline)' }),
        expect: z.array(z.strictObject({ rule: z.string().min(1), entity: z.string().min(1), step: z.number().int() })).nullish(),
      }),
    )
    .min(1, { error: 'needs at least one test' }),
});

export interface ExpectedAlert {
  rule: string;
  entity: string;
  /** 1-based: step 1 is the baseline. */
  step: number;
}

export interface RuleTest {
  name: string;
  source: SourceName;
  intervalMs: number;
  /** Each step: entity key -> the fields it gives (the others keep their previous values). */
  steps: Array<Record<string, Record<string, unknown>>>;
  expect: ExpectedAlert[];
  /** Where each expected alert is written, to place the problems found once the rules are known. */
  expectAt: Array<{ rule: Position; entity: Position; step: Position }>;
  at: Position;
}

export interface RuleTestFile {
  file: string;
  /** As written: relative to the test file's folder. */
  ruleFiles: string[];
  /** Where each rule file is named. */
  ruleFilesAt: Position[];
  tests: RuleTest[];
  problems: RuleProblem[];
}

/** Parses a test file; problems of its own shape (a step naming no entity, a step out of range) included. */
export function parseRuleTests(text: string, file: string): RuleTestFile {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  const empty: RuleTestFile = { file, ruleFiles: [], ruleFilesAt: [], tests: [], problems: [] };
  if (doc.errors.length > 0) {
    return {
      ...empty,
      problems: doc.errors.map((error) => {
        const { line, col } = lineCounter.linePos(error.pos[0]);
        return { file, line, column: col, message: `invalid YAML: ${error.message.split('\n')[0]}` };
      }),
    };
  }
  const locate = createLocator(doc, lineCounter);
  const raw: unknown = doc.toJS({ maxAliasCount: 100 });
  const parsed = RuleTestFileSchema.safeParse(raw, { reportInput: true });
  if (!parsed.success) {
    const issues = fromZodIssues(parsed.error.issues, {
      base: [],
      label: '',
      unknownKey: (key, path) =>
        path.length === 0 ? `unknown key "${key}" (a test file has rule_files and tests)` : `unknown key "${key}" (a test has name, source, interval, steps and expect; an expected alert rule, entity and step)`,
    });
    return { ...empty, problems: toProblems(locate, file, issues) };
  }
  const issues: Issue[] = [];
  const tests = parsed.data.tests.map((test, t): RuleTest => {
    const base = ['tests', t];
    const steps = test.steps.map((step, s) => {
      const entities = Object.fromEntries(Object.entries(step ?? {}).map(([key, fields]) => [key, fields ?? {}]));
      if (Object.keys(entities).length === 0) {
        issues.push({ path: [...base, 'steps', s], message: `test "${test.name}": step ${s + 1} names no entity (write { KEY: { field: value } })` });
      }
      return entities;
    });
    const expect = test.expect ?? [];
    expect.forEach((alert, e) => {
      const path = [...base, 'expect', e];
      if (alert.step < 1 || alert.step > steps.length) {
        issues.push({ path: [...path, 'step'], message: `test "${test.name}": step ${alert.step} is out of range (steps 1 to ${steps.length})` });
      } else if (!steps.slice(0, alert.step).some((step) => Object.hasOwn(step, alert.entity))) {
        issues.push({ path: [...path, 'entity'], message: `test "${test.name}": no step up to step ${alert.step} names entity ${alert.entity}` });
      }
    });
    return {
      name: test.name,
      source: test.source,
      intervalMs: parseDuration(test.interval)!,
      steps,
      expect,
      expectAt: expect.map((_, e) => ({
        rule: locate([...base, 'expect', e, 'rule']),
        entity: locate([...base, 'expect', e, 'entity']),
        step: locate([...base, 'expect', e, 'step']),
      })),
      at: locate([...base, 'name']),
    };
  });
  const ruleFilesAt = parsed.data.rule_files.map((_, i) => locate(['rule_files', i]));
  return { file, ruleFiles: parsed.data.rule_files, ruleFilesAt, tests, problems: toProblems(locate, file, issues) };
}

/** The expected alerts that name a rule the rule files do not hold, or a rule of another source. */
export function checkExpectedRules(parsed: RuleTestFile, rules: readonly Rule[]): RuleProblem[] {
  const problems: RuleProblem[] = [];
  const names = rules.map((rule) => rule.name).join(', ') || 'none';
  for (const test of parsed.tests) {
    test.expect.forEach((alert, e) => {
      const rule = rules.find((r) => r.name === alert.rule);
      const at = test.expectAt[e]!.rule;
      if (!rule) problems.push({ file: parsed.file, ...at, message: `test "${test.name}": unknown rule ${alert.rule} in the rule files (rules: ${names})` });
      else if (rule.source !== test.source) {
        problems.push({ file: parsed.file, ...at, message: `test "${test.name}": rule ${alert.rule} is on ${rule.source}, the test on ${test.source}` });
      }
    });
  }
  return problems;
}

/** Entity key fields a step may leave out: they are the key. */
const KEY_FIELD: Partial<Record<SourceName, string>> = { events: 'event_ticker', kpis: 'id', runs: 'run_id' };

/**
 * Each step as a poll's items: every entity seen so far, with the fields given in this step over
 * those it had (a poll lists every entity, changed or not).
 */
export function stepSnapshots(test: RuleTest): Array<Array<{ key: string; data: Record<string, unknown> }>> {
  const current = new Map<string, Record<string, unknown>>();
  const keyField = KEY_FIELD[test.source];
  return test.steps.map((step) => {
    for (const [key, fields] of Object.entries(step)) {
      const before = current.get(key) ?? (keyField ? { [keyField]: key } : {});
      current.set(key, { ...before, ...fields });
    }
    return [...current].map(([key, data]) => ({ key, data: isRecord(data) ? data : {} }));
  });
}

/** `rule-name KXA step 2` */
export function alertLabel(alert: ExpectedAlert): string {
  return `${alert.rule} ${alert.entity} step ${alert.step}`;
}

/** Whether the actual alerts are exactly the expected ones, in order. */
export function sameAlerts(expected: readonly ExpectedAlert[], actual: readonly ExpectedAlert[]): boolean {
  return expected.length === actual.length && expected.every((alert, i) => alertLabel(alert) === alertLabel(actual[i]!));
}

/** Expected and actual alerts side by side, one pair a line, a differing line marked. */
export function sideBySide(expected: readonly ExpectedAlert[], actual: readonly ExpectedAlert[]): string[] {
  const left = ['expected', ...expected.map(alertLabel)];
  const right = ['actual', ...actual.map(alertLabel)];
  if (expected.length === 0) left.push('(no alert)');
  if (actual.length === 0) right.push('(no alert)');
  const width = Math.max(...left.map((line) => line.length)) + 2;
  return Array.from({ length: Math.max(left.length, right.length) }, (_, i) => {
    const l = left[i] ?? '';
    const r = right[i] ?? '';
    const mark = i > 0 && l !== r ? '≠' : ' ';
    return `${mark} ${l.padEnd(width)}${r}`.trimEnd();
  });
}
