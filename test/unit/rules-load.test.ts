import { execFileSync } from 'node:child_process';
import { rm, writeFile, mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CREDENTIAL_VARIABLES } from '../../src/config.ts';
import { combineRuleFiles, formatProblem, loadRules, ruleContext, type RuleContext } from '../../src/rules/index.ts';
import { MAX_RULE_FILE_BYTES } from '../../src/rules/load.ts';
import { tempDir } from '../helpers/files.ts';

const CONSOLE_ONLY: RuleContext = { env: {}, credentials: CREDENTIAL_VARIABLES, templates: new Set(), transports: { slack: false, email: false } };

describe('the example rules folder', () => {
  it('is valid with only the console channel configured', async () => {
    const set = await loadRules('rules', CONSOLE_ONLY);
    expect(set.problems.map(formatProblem)).toEqual([]);
    expect([...set.channels.keys()]).toEqual(['screen']);
    const triggers = new Set(set.rules.map((r) => r.trigger.type));
    expect([...triggers].sort()).toEqual(['appears', 'changes', 'crosses', 'flips', 'moves', 'new', 'rises', 'drops', 'overdue', 'added'].sort());
    expect(new Set(set.rules.map((r) => r.source))).toEqual(new Set(['events', 'kpis', 'reports', 'runs', 'edge', 'rankings', 'markets', 'similar', 'baskets']));
    expect(set.rules.find((r) => r.trigger.type === 'appears')?.digest).toEqual({ cron: '0 18 * * *', timezone: 'UTC' });
  });
});

describe('combineRuleFiles: checks across files', () => {
  const channels = 'channels:\n  screen: { type: console }\n';
  const ruleA = 'rules:\n  - name: a\n    source: events\n    trigger: { type: new }\n    notify: [screen]\n';

  it.each([
    {
      name: 'notify may name a channel of another file',
      files: [
        { file: 'a.yaml', text: ruleA },
        { file: 'b.yaml', text: channels },
      ],
      problems: [],
      rules: ['a'],
    },
    {
      name: 'duplicate rule: reported at the second, naming the first',
      files: [
        { file: 'a.yaml', text: channels + ruleA },
        { file: 'b.yaml', text: '# again\n' + ruleA },
      ],
      problems: ['b.yaml:3:11: rule "a" is already defined at a.yaml:4:11'],
      rules: ['a'],
    },
    {
      name: 'duplicate channel across files',
      files: [
        { file: 'a.yaml', text: channels },
        { file: 'b.yaml', text: 'channels:\n  other: { type: console }\n  screen: { type: console }\n' },
      ],
      problems: ['b.yaml:3:3: channel "screen" is already defined at a.yaml:2:3'],
      rules: [],
    },
    {
      name: 'unknown channel across files',
      files: [
        { file: 'a.yaml', text: channels },
        { file: 'b.yaml', text: ruleA.replace('[screen]', '[screen, slack-main]') },
      ],
      problems: ['b.yaml:5:22: rule "a": unknown channel "slack-main" in notify (channels: screen)'],
      rules: [],
    },
    {
      name: 'no channel at all',
      files: [{ file: 'a.yaml', text: ruleA }],
      problems: ['a.yaml:5:14: rule "a": unknown channel "screen" in notify (no channel is defined)'],
      rules: [],
    },
    {
      name: 'problems of every file, in file order',
      files: [
        { file: 'b.yaml', text: 'rulez: []\n' },
        { file: 'a.yaml', text: channels + 'oops: 1\n' },
      ],
      problems: [
        'b.yaml:1:1: unknown top-level key "rulez" (did you mean rules?) (a rule file has channels, rules, health, watchlists and baskets)',
        'a.yaml:3:1: unknown top-level key "oops" (a rule file has channels, rules, health, watchlists and baskets)',
      ],
      rules: [],
    },
  ])('$name', ({ files, problems, rules }) => {
    const set = combineRuleFiles(files, CONSOLE_ONLY);
    expect(set.problems.map(formatProblem)).toEqual(problems);
    expect(set.rules.map((r) => r.name)).toEqual(rules);
  });
});

describe('loadRules on disk', () => {
  let dir: string;
  beforeAll(async () => {
    dir = tempDir('edgewatch-rules-');
    await mkdir(join(dir, 'rules'));
    await writeFile(join(dir, 'rules', 'b.yml'), 'rules:\n  - { name: b, source: kpis, trigger: { type: new }, notify: [screen] }\n');
    await writeFile(join(dir, 'rules', 'a.yaml'), 'channels:\n  screen: { type: console }\nrules:\n  - { name: a, source: events, trigger: { type: new }, notify: [screen], template: edge }\n');
    await writeFile(join(dir, 'rules', 'notes.txt'), 'not: [a rule file');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads *.yaml and *.yml in name order, ignores other files', async () => {
    const set = await loadRules(join(dir, 'rules'), { ...CONSOLE_ONLY, templates: new Set(['edge']) });
    expect(set.problems).toEqual([]);
    expect(set.rules.map((r) => [r.name, r.file, r.line])).toEqual([
      ['a', join(dir, 'rules', 'a.yaml'), 4],
      ['b', join(dir, 'rules', 'b.yml'), 2],
    ]);
  });

  it('a missing folder is a problem, not a throw', async () => {
    const set = await loadRules(join(dir, 'nope'), CONSOLE_ONLY);
    expect(set.rules).toEqual([]);
    expect(set.problems).toHaveLength(1);
    expect(set.problems[0]).toMatchObject({ file: join(dir, 'nope'), line: 1, column: 1 });
    expect(set.problems[0]!.message).toMatch(/^cannot read the rules folder: /);
  });
});

describe('loadRules reads only regular files inside the folder', () => {
  const channels = 'channels:\n  screen: { type: console }\n';
  let dir: string;
  let rules: string;
  beforeEach(async () => {
    dir = tempDir('edgewatch-rules-');
    rules = join(dir, 'rules');
    await mkdir(rules);
    await writeFile(join(rules, 'a.yaml'), channels);
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('a symbolic link leading out of the folder is a problem, and its contents are never echoed', async () => {
    await writeFile(join(dir, 'shadow'), 'root-password-hash: x\nother-secret-line: y\n');
    await symlink(join(dir, 'shadow'), join(rules, 'b.yaml'));
    const set = await loadRules(rules, CONSOLE_ONLY);
    expect(set.problems.map(formatProblem)).toEqual([`${join(rules, 'b.yaml')}:1:1: not read: a symbolic link to outside the rules folder`]);
    expect([...set.channels.keys()]).toEqual(['screen']);
  });

  it('a symbolic link to a file inside the folder is read', async () => {
    await mkdir(join(rules, 'shared'));
    await writeFile(join(rules, 'shared', 'rules.txt'), 'rules:\n  - { name: a, source: events, trigger: { type: new }, notify: [screen] }\n');
    await symlink(join('shared', 'rules.txt'), join(rules, 'b.yaml'));
    const set = await loadRules(rules, CONSOLE_ONLY);
    expect(set.problems).toEqual([]);
    expect(set.rules.map((r) => r.name)).toEqual(['a']);
  });

  it('a FIFO is a problem, and reading the folder does not wait for a writer', { timeout: 10_000 }, async () => {
    execFileSync('mkfifo', [join(rules, 'b.yaml')]);
    const set = await loadRules(rules, CONSOLE_ONLY);
    expect(set.problems.map(formatProblem)).toEqual([`${join(rules, 'b.yaml')}:1:1: not read: a FIFO, not a regular file`]);
  });

  it('a folder named like a rule file is a problem', async () => {
    await mkdir(join(rules, 'b.yaml'));
    const set = await loadRules(rules, CONSOLE_ONLY);
    expect(set.problems.map(formatProblem)).toEqual([`${join(rules, 'b.yaml')}:1:1: not read: a directory, not a regular file`]);
  });

  it('a file over 1 MiB is a problem naming the limit; a file of exactly 1 MiB is read', async () => {
    const comments = (bytes: number) => `${'#'.repeat(99)}\n`.repeat(bytes / 100) + '#'.repeat(bytes % 100);
    await writeFile(join(rules, 'b.yaml'), comments(MAX_RULE_FILE_BYTES));
    await writeFile(join(rules, 'c.yaml'), comments(MAX_RULE_FILE_BYTES + 1));
    const set = await loadRules(rules, CONSOLE_ONLY);
    expect(set.problems.map(formatProblem)).toEqual([
      `${join(rules, 'c.yaml')}:1:1: not read: ${MAX_RULE_FILE_BYTES + 1} bytes, over the limit of 1048576 bytes (1 MiB) for a rule file`,
    ]);
  });
});

it('ruleContext from the configuration', () => {
  const templates = new Set(['edge']);
  expect(ruleContext({ env: { A: '1' }, slackToken: 'xoxb-1', smtpUrl: undefined }, templates)).toEqual({
    env: { A: '1' },
    credentials: ['EDGEWATCH_API_KEY', 'SLACK_BOT_TOKEN', 'SMTP_URL', 'EDGEWATCH_DB'],
    templates,
    transports: { slack: true, email: false },
  });
});
