// Bad rules, fuzzed: rule files mutated at random (seeded) by deleting, duplicating and swapping
// lines, re-indenting, flipping value types, inserting garbage and truncating. Validation never
// throws, and every problem names a file of the folder and a line within that file.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CREDENTIAL_VARIABLES } from '../../src/config.ts';
import type { RuleProblem } from '../../src/core/types.ts';
import { formatProblem, loadRules } from '../../src/rules/index.ts';
import { REPO, runCli, type CliResult } from '../helpers/cli.ts';
import { tempDir } from '../helpers/files.ts';
import { TEMPLATES_DIR } from '../helpers/pipeline.ts';
import { mulberry32, type Rng } from './harness.ts';
import { mutate } from './rule-mutations.ts';

const SECRET = `whsec_${Buffer.from('rules-fuzz-secret-0123456789ab').toString('base64')}`;

/** Every construct of the format, so that mutations reach every branch of the checks. */
const BASE = `# channels and rules for the fuzzer
channels:
  trading:
    type: slack
    channel: "#pm-alerts"
  me:
    type: email
    to: [analyst@example.com, risk@example.com]
  pipeline:
    type: webhook
    url: https://example.com/hooks/edgewatch
    secret: \${PIPELINE_SECRET}
    headers: { X-Team: research }
  screen:
    type: console

rules:
  - name: politics-edge-over-10
    description: Edge above 10 pp on politics events
    source: events
    trigger: { type: crosses, field: edge_pp, above: 10, abs: true, rearm: 2 }
    filter:
      series_category: politics
      confidence_score: { gte: 6 }
      event_ticker: [KXFED-25DEC, KXCPI-25NOV]
    notify: [trading, pipeline]
    severity: warning
    cooldown: 2h
    template: edge
  - name: edge-moves
    source: events
    trigger:
      type: moves
      field: edge_pp
      by: 5
      direction: any
    notify: [screen]
  - name: near-settled
    source: kpis
    trigger: { type: flips, field: near_settled, to: true }
    notify: [me]
    digest: { cron: "0 18 * * *", timezone: UTC }
  - name: kpi-actual
    source: kpis
    trigger: { type: appears, field: actual }
    filter: { liquidity_tier: { in: [high, medium] } }
    notify: [me, screen]
    digest: { window: 15m }
  - name: trust-drop
    source: reports
    trigger: { type: drops, field: trust_label, by: 1, to_at_most: Caution }
    notify: [trading]
    severity: critical
  - name: run-finished
    source: runs
    trigger: { type: changes, field: status, to: [completed, failed] }
    notify: [screen]
  - name: new-events
    source: events
    trigger: { type: new }
    notify: [pipeline]
`;

const ctx = {
  env: { PIPELINE_SECRET: SECRET },
  credentials: CREDENTIAL_VARIABLES,
  templates: new Set(['edge']),
  transports: { slack: true, email: true },
};

/** Lines of each file as an editor counts them (a final newline opens an empty last line). */
function lineCounts(dir: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const name of readdirSync(dir)) counts.set(path.join(dir, name), readFileSync(path.join(dir, name), 'utf8').split(/\r\n|\r|\n/).length);
  return counts;
}

function checkProblem(problem: RuleProblem, counts: Map<string, number>): void {
  const lines = counts.get(problem.file);
  expect(lines, `${formatProblem(problem)}: a file of the folder`).toBeDefined();
  expect(problem.line, formatProblem(problem)).toBeGreaterThanOrEqual(1);
  expect(problem.line, formatProblem(problem)).toBeLessThanOrEqual(lines!);
  expect(problem.column, formatProblem(problem)).toBeGreaterThanOrEqual(1);
  expect(problem.message.trim()).not.toBe('');
  expect(formatProblem(problem)).toMatch(/^.+:\d+:\d+: \S/);
}

function validateCli(rulesDir: string, dir: string): Promise<CliResult> {
  const env = {
    EDGEWATCH_RULES: rulesDir,
    EDGEWATCH_TEMPLATES: TEMPLATES_DIR,
    EDGEWATCH_DB: path.join(dir, 'cli.db'),
    PIPELINE_SECRET: SECRET,
    SLACK_BOT_TOKEN: 'xoxb-fuzz',
    SMTP_URL: 'smtp://127.0.0.1:2525',
  };
  return runCli(['validate'], env, { cwd: dir });
}

let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

function sampleFolder(rng: Rng, sample: number): string {
  const dir = tempDir('edgewatch-fuzz-');
  dirs.push(dir);
  const rulesDir = path.join(dir, `rules-${sample}`);
  mkdirSync(rulesDir);
  // The fuzzed file beside an untouched example file, so that problems can name either.
  writeFileSync(path.join(rulesDir, 'a-fuzzed.yaml'), mutate(BASE, rng));
  writeFileSync(path.join(rulesDir, 'b-runs.yml'), readFileSync(path.join(REPO, 'rules/runs.yaml'), 'utf8'));
  return rulesDir;
}

describe('rule files fuzzed', () => {
  it('the base file is valid, so every problem below comes from a mutation', async () => {
    const dir = tempDir('edgewatch-fuzz-');
    dirs.push(dir);
    writeFileSync(path.join(dir, 'rules.yaml'), BASE);
    expect((await loadRules(dir, ctx)).problems).toEqual([]);
  });

  it('an alias without its anchor is a positioned problem, not a crash', async () => {
    const dir = tempDir('edgewatch-fuzz-');
    dirs.push(dir);
    writeFileSync(path.join(dir, 'rules.yaml'), BASE.replace('notify: [screen]\n  - name: near-settled', 'notify: *screens\n  - name: near-settled'));
    const { problems } = await loadRules(dir, ctx);
    expect(problems.map(formatProblem)).toEqual([`${path.join(dir, 'rules.yaml')}:37:13: invalid YAML: Unresolved alias (the anchor must be set before the alias): screens`]);
  });

  it('never throws, and every problem names a file and a line within it (300 samples)', async () => {
    const rng = mulberry32(20261122);
    let invalid = 0;
    for (let sample = 0; sample < 300; sample++) {
      const rulesDir = sampleFolder(rng, sample);
      const counts = lineCounts(rulesDir);
      const set = await loadRules(rulesDir, ctx);
      for (const problem of set.problems) checkProblem(problem, counts);
      if (set.problems.length > 0) invalid++;
      // What survived validation is usable: every rule's channels exist.
      for (const rule of set.rules) for (const channel of rule.notify) expect(set.channels.has(channel)).toBe(true);
    }
    expect(invalid).toBeGreaterThan(150);
  });

  it('the real `validate` command prints positioned problems and exits 0 or 1, never crashing', { timeout: 60_000 }, async () => {
    const rng = mulberry32(7);
    const samples = Array.from({ length: 4 }, (_, i) => sampleFolder(rng, i));
    const results = await Promise.all(samples.map((rulesDir) => validateCli(rulesDir, path.dirname(rulesDir))));
    let invalid = 0;
    for (const [i, result] of results.entries()) {
      const counts = lineCounts(samples[i]!);
      expect(result.stderr, result.stderr).not.toMatch(/\n\s+at |TypeError|ReferenceError|Unhandled/);
      expect([0, 1]).toContain(result.code);
      const lines = result.stdout.split('\n').filter(Boolean);
      if (result.code === 0) {
        expect(lines.at(-1)).toMatch(/valid$/);
        continue;
      }
      invalid++;
      expect(lines.length).toBeGreaterThan(0);
      for (const text of lines) {
        const match = /^(.+):(\d+):(\d+): (.+)$/.exec(text);
        expect(match, text).not.toBeNull();
        checkProblem({ file: match![1]!, line: Number(match![2]), column: Number(match![3]), message: match![4]! }, counts);
      }
    }
    expect(invalid).toBeGreaterThan(0);
  });
});
