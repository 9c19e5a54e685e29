// The rules folder: every *.yaml / *.yml file, sorted by name, checked together.
// Only loadRules touches the disk; combineRuleFiles is pure.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Channel, Rule, RuleProblem } from '../core/types.ts';
import { checkAcrossFiles, parseRuleFileDetail, type RuleContext } from './parse.ts';

export interface RuleSet {
  /** Valid channels by name. */
  channels: Map<string, Channel>;
  /** Valid rules, in file order; every name in their notify is in `channels`. */
  rules: Rule[];
  /** Every problem; the set is valid when there is none. */
  problems: RuleProblem[];
}

const RULE_FILE = /\.ya?ml$/i;

/** Parses rule files (in the order given) and checks them together. */
export function combineRuleFiles(files: ReadonlyArray<{ file: string; text: string }>, ctx: RuleContext): RuleSet {
  const combined = checkAcrossFiles(files.map(({ file, text }) => parseRuleFileDetail(text, file, ctx)));
  return {
    channels: new Map(combined.channels.map((channel) => [channel.name, channel])),
    rules: combined.rules,
    problems: combined.problems,
  };
}

/** Reads and checks every rule file of `dir`. A folder or file that cannot be read is a problem, not a throw. */
export async function loadRules(dir: string, ctx: RuleContext): Promise<RuleSet> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((name) => RULE_FILE.test(name)).sort();
  } catch (error) {
    return { channels: new Map(), rules: [], problems: [{ file: dir, line: 1, column: 1, message: `cannot read the rules folder: ${errorText(error)}` }] };
  }
  const unreadable: RuleProblem[] = [];
  const files: Array<{ file: string; text: string }> = [];
  for (const name of names) {
    const file = join(dir, name);
    try {
      files.push({ file, text: await readFile(file, 'utf8') });
    } catch (error) {
      unreadable.push({ file, line: 1, column: 1, message: `cannot read the rule file: ${errorText(error)}` });
    }
  }
  const set = combineRuleFiles(files, ctx);
  return unreadable.length > 0 ? { ...set, problems: [...unreadable, ...set.problems] } : set;
}

/** The context rule files are checked in, from the configuration. */
export function ruleContext(
  config: { env: Readonly<Record<string, string | undefined>>; slackToken: string | undefined; smtpUrl: string | undefined },
  templates: ReadonlySet<string>,
): RuleContext {
  return { env: config.env, templates, transports: { slack: Boolean(config.slackToken), email: Boolean(config.smtpUrl) } };
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
