// `edgewatch test`: rule unit tests run in memory through the real planner. A test file names its
// rule files; each is loaded with the rest of its folder (for the channels its rules notify), and
// each test's steps are replayed as successive polls of its source (replay.ts).
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { errorMessage } from '../core/errors.ts';
import type { RuleProblem } from '../core/types.ts';
import { loadRules, type Rule, type RuleContext } from '../rules/index.ts';
import { checkExpectedRules, parseRuleTests, sameAlerts, stepSnapshots, type ExpectedAlert, type RuleTest, type RuleTestFile } from '../rules/rule-tests.ts';
import { eventSnapshot } from '../sources/index.ts';
import { openReplay } from './replay.ts';

/** When a test's first step is polled; the next ones follow at its interval. */
export const TEST_START = new Date('2026-01-01T00:00:00Z');

export interface RuleTestResult {
  test: RuleTest;
  passed: boolean;
  actual: ExpectedAlert[];
  /** Alerts an `unless` entry inhibited: recorded, never sent, so not fired as far as `expect` goes. */
  inhibited: ExpectedAlert[];
}

export interface RuleTestFileOutcome {
  file: string;
  /** A file with problems runs none of its tests. */
  problems: RuleProblem[];
  results: RuleTestResult[];
  /** Tests the file holds (counted as failed when it has problems; 1 when it could not be read). */
  tests: number;
}

/** The rules of the named files, each loaded with its folder; problems of those files only. */
async function rulesOf(parsed: RuleTestFile, ctx: RuleContext): Promise<{ rules: Rule[]; problems: RuleProblem[] }> {
  const base = path.dirname(parsed.file);
  const named = parsed.ruleFiles.map((file) => path.resolve(base, file));
  const rules: Rule[] = [];
  const problems: RuleProblem[] = [];
  for (const folder of new Set(named.map((file) => path.dirname(file)))) {
    const set = await loadRules(folder, ctx);
    rules.push(...set.rules.filter((rule) => named.includes(path.resolve(rule.file))));
    problems.push(...set.problems.filter((problem) => named.includes(path.resolve(problem.file))));
  }
  for (const [i, file] of named.entries()) {
    if (!(await isFile(file))) problems.push({ file: parsed.file, ...parsed.ruleFilesAt[i]!, message: `rule file ${parsed.ruleFiles[i]} not found (${file})` });
  }
  return { rules, problems };
}

/** The test file's own problems by position, those of its rule files after them. */
function sortedProblems(problems: RuleProblem[]): RuleProblem[] {
  return [...problems].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line || a.column - b.column));
}

async function isFile(file: string): Promise<boolean> {
  try {
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}

/** Replays one test's steps, the first a baseline; returns the alerts fired (and inhibited), by step. */
async function runTest(test: RuleTest, rules: readonly Rule[]): Promise<Pick<RuleTestResult, 'actual' | 'inhibited'>> {
  const replay = await openReplay();
  const sourceRules = rules.filter((rule) => rule.source === test.source);
  const result: Pick<RuleTestResult, 'actual' | 'inhibited'> = { actual: [], inhibited: [] };
  try {
    for (const [i, items] of stepSnapshots(test).entries()) {
      const page = test.source === 'events' ? items.map((item) => ({ ...item, data: eventSnapshot(item.data) })) : items;
      const now = new Date(TEST_START.getTime() + i * test.intervalMs);
      const polled = await replay.poll(test.source, page, sourceRules, now, i === 0);
      result.actual.push(...polled.alerts.map((alert) => ({ rule: alert.rule, entity: alert.entity, step: i + 1 })));
      result.inhibited.push(...polled.inhibited.map((alert) => ({ rule: alert.rule, entity: alert.entity, step: i + 1 })));
    }
  } finally {
    await replay.close();
  }
  return result;
}

export async function runRuleTestFile(file: string, ctx: RuleContext): Promise<RuleTestFileOutcome> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    return { file, problems: [{ file, line: 1, column: 1, message: `cannot read the test file: ${errorMessage(error)}` }], results: [], tests: 1 };
  }
  const parsed = parseRuleTests(text, file);
  const tests = Math.max(parsed.tests.length, 1);
  const problems = [...parsed.problems];
  // A file of the right shape is checked against its rules too, so that every problem shows at once.
  const { rules, problems: ruleProblems } = parsed.ruleFiles.length > 0 ? await rulesOf(parsed, ctx) : { rules: [], problems: [] };
  problems.push(...ruleProblems, ...(ruleProblems.length === 0 ? checkExpectedRules(parsed, rules) : []));
  if (problems.length > 0) return { file, problems: sortedProblems(problems), results: [], tests };
  const results: RuleTestResult[] = [];
  for (const test of parsed.tests) {
    const { actual, inhibited } = await runTest(test, rules);
    results.push({ test, passed: sameAlerts(test.expect, actual), actual, inhibited });
  }
  return { file, problems: [], results, tests };
}
