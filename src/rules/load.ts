// The rules folder: every *.yaml / *.yml file, sorted by name, checked together.
// Only loadRules touches the disk; combineRuleFiles is pure.
import { constants, type Stats } from 'node:fs';
import { open, readdir, realpath, type FileHandle } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
import { CREDENTIAL_VARIABLES } from '../config.ts';
import { errorMessage } from '../core/errors.ts';
import type { RuleProblem } from '../core/types.ts';
import type { Channel, HealthSettings, Rule } from './schema.ts';
import { checkAcrossFiles, parseRuleFileDetail, type RuleContext } from './parse.ts';

export interface RuleSet {
  /** Valid channels by name. */
  channels: Map<string, Channel>;
  /** Valid rules, in file order; every name in their notify is in `channels`. */
  rules: Rule[];
  /** Every problem; the set is valid when there is none. */
  problems: RuleProblem[];
  /** Source health notices, when a file declares `health`. */
  health?: HealthSettings;
  /** What is valid but likely a mistake, for `validate` to print. */
  warnings: RuleProblem[];
}

const RULE_FILE = /\.ya?ml$/i;

/** The largest rule file read. Rules are written by hand; a larger file is a mistake or an attack. */
export const MAX_RULE_FILE_BYTES = 1024 * 1024;

/** Parses rule files (in the order given) and checks them together. */
export function combineRuleFiles(files: ReadonlyArray<{ file: string; text: string }>, ctx: RuleContext): RuleSet {
  const combined = checkAcrossFiles(files.map(({ file, text }) => parseRuleFileDetail(text, file, ctx)));
  return {
    channels: new Map(combined.channels.map((channel) => [channel.name, channel])),
    rules: combined.rules,
    problems: combined.problems,
    ...(combined.health ? { health: combined.health } : {}),
    warnings: combined.warnings,
  };
}

/**
 * Reads and checks every rule file of `dir`. A folder or file that cannot be read is a problem,
 * not a throw. Only regular files inside the folder are read: never a symbolic link leading out
 * of it (its contents would be echoed in problems), a FIFO (reading it waits forever) or a device.
 */
export async function loadRules(dir: string, ctx: RuleContext): Promise<RuleSet> {
  let names: string[];
  let realDir: string;
  try {
    names = (await readdir(dir)).filter((name) => RULE_FILE.test(name)).sort();
    realDir = await realpath(dir);
  } catch (error) {
    return { channels: new Map(), rules: [], problems: [{ file: dir, line: 1, column: 1, message: `cannot read the rules folder: ${errorMessage(error)}` }], warnings: [] };
  }
  const unreadable: RuleProblem[] = [];
  const files: Array<{ file: string; text: string }> = [];
  for (const name of names) {
    const file = join(dir, name);
    const read = await readRuleFile(file, realDir);
    if (typeof read === 'string') files.push({ file, text: read });
    else unreadable.push({ file, line: 1, column: 1, message: read.problem });
  }
  const set = combineRuleFiles(files, ctx);
  return unreadable.length > 0 ? { ...set, problems: [...unreadable, ...set.problems] } : set;
}

/** The text of a rule file, or why it was not read. */
async function readRuleFile(file: string, realDir: string): Promise<string | { problem: string }> {
  let handle: FileHandle | undefined;
  try {
    const real = await realpath(file);
    const inside = relative(realDir, real);
    if (inside === '..' || inside.startsWith(`..${sep}`) || isAbsolute(inside)) {
      return { problem: 'not read: a symbolic link to outside the rules folder' };
    }
    // Non-blocking, so that opening a FIFO returns at once (and is then refused, not read).
    handle = await open(real, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
    const stats = await handle.stat();
    if (!stats.isFile()) return { problem: `not read: ${fileKind(stats)}, not a regular file` };
    if (stats.size > MAX_RULE_FILE_BYTES) {
      return { problem: `not read: ${stats.size} bytes, over the limit of ${MAX_RULE_FILE_BYTES} bytes (1 MiB) for a rule file` };
    }
    return await handle.readFile('utf8');
  } catch (error) {
    return { problem: `cannot read the rule file: ${errorMessage(error)}` };
  } finally {
    await handle?.close();
  }
}

function fileKind(stats: Stats): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  return 'a special file';
}

/** The context rule files are checked in, from the configuration. */
export function ruleContext(
  config: { env: Readonly<Record<string, string | undefined>>; slackToken: string | undefined; smtpUrl: string | undefined },
  templates: ReadonlySet<string>,
): RuleContext {
  return {
    env: config.env,
    credentials: CREDENTIAL_VARIABLES,
    templates,
    transports: { slack: Boolean(config.slackToken), email: Boolean(config.smtpUrl) },
  };
}
