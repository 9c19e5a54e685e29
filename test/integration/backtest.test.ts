// `backtest` and `test` as users call them: a history constructed on the sandbox, replayed through
// the real planner by the command line; the same steps as a rule unit test agree; nothing is stored.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/index.ts';
import { BIN, runCli, startSandboxWithRules, type SandboxWithRules } from '../helpers/cli.ts';
import { tempDir } from '../helpers/files.ts';

const RULES = `
channels:
  screen: { type: console }
rules:
  - name: edge-crosses-10
    source: events
    trigger: { type: crosses, field: edge_pp, above: 10, abs: true, rearm: 2 }
    filter: { series_category: politics }
    notify: [screen]
  - name: kpi-landed
    source: kpis
    trigger: { type: appears, field: actual }
    notify: [screen]
`;

/** The edges the constructed event moves through, 30 simulated minutes apart. */
const EDGES = [5, 12, 11, 9, 13, 8, -14, 7];
/** The 0-based steps at which edge-crosses-10 fires: above 10 at 12, disarmed until back to 8, then -14. */
const FIRING_STEPS = [1, 6];

let scene: SandboxWithRules;
let ticker: string;
let times: string[];
let from: string;
let to: string;

beforeAll(async () => {
  scene = await startSandboxWithRules({ rules: RULES, sandbox: { seed: 7 } });
  const { world } = scene.sandbox;
  times = [];
  // Paused: the world moves only open events on its own, so this history is exactly the one built here.
  ticker = world.addEvent({ eligibility_status: 'paused', series_category: 'politics', edge_pp: EDGES[0] });
  times.push(scene.sandbox.now().toISOString().replace('.000Z', 'Z'));
  for (const edge of EDGES.slice(1)) {
    scene.sandbox.advance(30);
    world.updateEvent(ticker, { edge_pp: edge });
    times.push(scene.sandbox.now().toISOString().replace('.000Z', 'Z'));
  }
  from = new Date(Date.parse(times[0]!) - 60_000).toISOString();
  to = new Date(Date.parse(times.at(-1)!) + 60_000).toISOString();
});

afterAll(() => scene.close());

const backtest = (...args: string[]) => runCli(['backtest', '--from', from, '--to', to, ...args], scene.env);

describe('backtest', () => {
  it('replays a crosses rule with rearm: exactly the expected alerts, at the snapshots\' captured_at', async () => {
    const result = await backtest('--entity', ticker, '--json');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as { from: string; to: string; rules: Array<{ rule: string; entities: number; alerts: Array<Record<string, unknown>> }> };
    expect(Object.keys(report)).toEqual(['from', 'to', 'rules']);
    expect(report.from).toBe(from.replace('.000Z', 'Z'));
    expect(report.to).toBe(to.replace('.000Z', 'Z'));
    expect(report.rules.map((r) => r.rule)).toEqual(['edge-crosses-10']);
    const [rule] = report.rules;
    expect(Object.keys(rule!)).toEqual(['rule', 'entities', 'alerts']);
    expect(rule!.entities).toBe(1);
    expect(rule!.alerts.map((a) => Object.keys(a))).toEqual(FIRING_STEPS.map(() => ['entity', 'fired_at', 'summary']));
    expect(rule!.alerts.map((a) => [a.entity, a.fired_at])).toEqual(FIRING_STEPS.map((step) => [ticker, times[step]]));
    expect(rule!.alerts.map((a) => a.summary)).toEqual([expect.stringContaining('edge +12.0 pp crossed above 10 pp'), expect.stringContaining('edge -14.0 pp crossed above 10 pp in absolute value')]);
  });

  it('starts at the range\'s first snapshot, a baseline: a range that begins at the crossing fires only the second one', async () => {
    const result = await runCli(['backtest', '--from', times[1]!, '--to', to, '--entity', ticker, '--json'], scene.env);
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as { rules: Array<{ alerts: Array<{ fired_at: string }> }> };
    expect(report.rules[0]!.alerts.map((a) => a.fired_at)).toEqual([times[6]]);
  });

  it('chooses the events by the filter on their latest snapshot, prints per rule the alerts in total, per day and the first ten', async () => {
    const result = await backtest();
    expect(result.code).toBe(0);
    // Piped: no progress bar.
    expect(result.stderr).toBe('');
    const json = await backtest('--json');
    const [rule] = (JSON.parse(json.stdout) as { rules: Array<{ entities: number; alerts: Array<{ entity: string; fired_at: string; summary: string }> }> }).rules;
    expect(rule!.entities).toBe(await politicsEvents());
    expect(rule!.alerts.filter((a) => a.entity === ticker).map((a) => a.fired_at)).toEqual(FIRING_STEPS.map((step) => times[step]));
    const perDay = new Map<string, number>();
    for (const alert of rule!.alerts) perDay.set(alert.fired_at.slice(0, 10), (perDay.get(alert.fired_at.slice(0, 10)) ?? 0) + 1);
    const width = Math.max(...rule!.alerts.slice(0, 10).map((a) => a.entity.length));
    expect(result.stdout.split('\n').slice(2)).toEqual([
      `edge-crosses-10: ${rule!.alerts.length} alerts from ${rule!.entities} events`,
      `  per day: ${[...perDay].map(([day, n]) => `${day} ${n}`).join(', ')}`,
      ...rule!.alerts.slice(0, 10).map((a) => `  ${a.fired_at.slice(0, 16).replace('T', ' ')} UTC  ${a.entity.padEnd(width)}  ${a.summary}`),
      ...(rule!.alerts.length > 10 ? [`  ... and ${rule!.alerts.length - 10} more (--json lists them all)`] : []),
      '',
    ]);
  });

  it('shows a progress bar (cli-progress) when standard error is a terminal', async () => {
    // `script` runs the command on a pseudo-terminal, as a person's shell would.
    const command = [process.execPath, BIN, 'backtest', '--from', from, '--to', to, '--entity', ticker].map((arg) => `'${arg}'`).join(' ');
    // Not spawnSync: the sandbox answering the command runs in this process.
    const child = spawn('script', ['-qec', `${command} 2>&1 >/dev/null`, '/dev/null'], { env: { PATH: process.env.PATH ?? '', ...scene.env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const [status] = (await once(child, 'exit')) as [number | null];
    expect(status).toBe(0);
    expect(output).toMatch(/backtest \|[░█]+\| [01]\/1 events/);
  });

  it('skips and counts an event whose history answers 404', async () => {
    const result = await backtest('--entity', ticker, '--entity', 'KXNOSUCH-26JAN');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('edge-crosses-10: 2 alerts from 1 event\n');
    expect(result.stdout).toMatch(/^1 event skipped: the API has no history for it \(404\): KXNOSUCH-26JAN$/m);
  });

  it('refuses a range over 90 days, --from after --to, a rule that is not on events: one line, exit 2', async () => {
    const cases = [
      [['--days', '91'], /^edgewatch backtest: --days 91: a backtest covers at most 90 days\n$/],
      [['--from', '2026-01-01', '--to', '2026-05-01'], /^edgewatch backtest: the range 2026-01-01T00:00:00Z to 2026-05-01T00:00:00Z is 120 days: a backtest covers at most 90\n$/],
      [['--from', '2026-03-02', '--to', '2026-03-01'], /^edgewatch backtest: --from 2026-03-02T00:00:00Z is after --to 2026-03-01T00:00:00Z\n$/],
      [['--from', 'yesterday'], /^edgewatch backtest: --from "yesterday" is not an ISO time/],
      [['--rule', 'kpi-landed'], /^edgewatch backtest: rule kpi-landed is on kpis: backtest replays the events' history, so only events rules\n$/],
      [['--rule', 'edge-crosses-1O'], /^edgewatch backtest: unknown rule edge-crosses-1O \(did you mean edge-crosses-10\?\)\n$/],
    ] as const;
    for (const [args, message] of cases) {
      const result = await runCli(['backtest', ...args], scene.env);
      expect({ args, code: result.code, stdout: result.stdout }).toEqual({ args, code: 2, stdout: '' });
      expect(result.stderr).toMatch(message);
    }
  });

  it('exits 1 with one line when the API fails', async () => {
    const result = await runCli(['backtest', '--entity', ticker], { ...scene.env, EDGEWATCH_API_URL: 'http://127.0.0.1:9/v1' });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/^edgewatch backtest: .*events list/);
  });

  it('leaves the database byte for byte as it was, on the sandbox given and on the built-in one', async () => {
    expect((await runCli(['poll', '--once'], scene.env)).code).toBe(0);
    // The database file and its write-ahead log, by content (a reader may leave an empty log behind).
    const files = (db: string) => [db, `${db}-wal`].map((file) => (existsSync(file) ? createHash('sha256').update(readFileSync(file)).digest('hex') : createHash('sha256').digest('hex')));
    const before = files(scene.dbPath);
    expect((await backtest('--entity', ticker)).code).toBe(0);
    expect(files(scene.dbPath)).toEqual(before);

    const dir = tempDir('edgewatch-backtest-');
    const db = path.join(dir, 'built-in.db');
    const builtIn = { EDGEWATCH_DB: db, EDGEWATCH_RULES: scene.rulesDir };
    expect((await runCli(['poll', '--once'], builtIn)).code).toBe(0);
    const stored = files(db);
    const result = await runCli(['backtest', '--days', '3'], builtIn);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^edge-crosses-10: \d+ alerts? from \d+ events?$/m);
    expect(files(db)).toEqual(stored);
  });
});

describe('backtest of an alert\'s life', () => {
  const LIFE_RULES = `
channels:
  screen: { type: console }
rules:
  - name: edge-held-over-20
    source: events
    trigger: { type: crosses, field: edge_pp, above: 20 }
    for: 1h
    notify: [screen]
  - name: sure-edge-over-10
    source: events
    trigger: { type: crosses, field: edge_pp, above: 10 }
    unless: [{ filter: { confidence_score: { lt: 3 } } }]
    notify: [screen]
`;
  /** 30 simulated minutes apart: beyond 20 from step 1, held through step 3 (1 h); again at 5, back within at 6. */
  const HELD = [5, 22, 25, 24, 10, 23, 12];
  let life: SandboxWithRules;
  let sure: string;
  let unsure: string;
  let at: string[];
  let range: string[];

  beforeAll(async () => {
    life = await startSandboxWithRules({ rules: LIFE_RULES, sandbox: { seed: 8 } });
    const { world } = life.sandbox;
    sure = world.addEvent({ eligibility_status: 'paused', confidence_score: 7, edge_pp: HELD[0] });
    unsure = world.addEvent({ eligibility_status: 'paused', confidence_score: 2, edge_pp: 5 });
    at = [life.sandbox.now().toISOString().replace('.000Z', 'Z')];
    for (const [i, edge] of HELD.slice(1).entries()) {
      life.sandbox.advance(30);
      world.updateEvent(sure, { edge_pp: edge });
      if (i === 0) world.updateEvent(unsure, { edge_pp: 12 });
      at.push(life.sandbox.now().toISOString().replace('.000Z', 'Z'));
    }
    range = ['--from', new Date(Date.parse(at[0]!) - 60_000).toISOString(), '--to', new Date(Date.parse(at.at(-1)!) + 60_000).toISOString()];
  });

  afterAll(() => life.close());

  it('fires a dwell (for) at the first snapshot after it completed, and not for a wait cut short', async () => {
    const result = await runCli(['backtest', ...range, '--rule', 'edge-held-over-20', '--entity', sure, '--json'], life.env);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as { rules: Array<{ rule: string; alerts: Array<{ entity: string; fired_at: string; summary: string }> }> };
    expect(report.rules[0]!.alerts).toEqual([{ entity: sure, fired_at: at[3], summary: expect.stringContaining('crossed above 20') }]);
  });

  it('leaves an alert inhibited by unless out of the alerts, and lists it apart in the text report', async () => {
    const json = await runCli(['backtest', ...range, '--rule', 'sure-edge-over-10', '--entity', sure, '--entity', unsure, '--json'], life.env);
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout) as { rules: Array<{ alerts: Array<{ entity: string; fired_at: string }> }> };
    expect(report.rules[0]!.alerts.map((a) => [a.entity, a.fired_at])).toEqual([
      [sure, at[1]],
      [sure, at[5]],
    ]);
    expect(json.stderr).toBe('edgewatch backtest: sure-edge-over-10: 1 alert inhibited by unless (recorded, never sent), left out of alerts\n');

    const text = await runCli(['backtest', ...range, '--rule', 'sure-edge-over-10', '--entity', sure, '--entity', unsure], life.env);
    expect(text.code).toBe(0);
    const lines = text.stdout.split('\n');
    const head = lines.indexOf('sure-edge-over-10: 2 alerts from 2 events');
    expect(head).toBeGreaterThan(0);
    expect(lines.slice(head + 4, head + 6)).toEqual([
      '  and 1 alert inhibited by unless (recorded, never sent), not counted above nor in --json:',
      expect.stringMatching(new RegExp(`^  ${at[1]!.slice(0, 16).replace('T', ' ')} UTC  ${unsure}  .*crossed above 10`)),
    ]);
  });
});

describe('the same rules in test form', () => {
  it('agree with the backtest: the same alerts at the same steps', async () => {
    const file = path.join(scene.dir, 'edges.test.yaml');
    const steps = EDGES.map((edge, i) => `      - { ${ticker}: { edge_pp: ${edge}${i === 0 ? ', series_category: politics' : ''} } }`);
    const expected = FIRING_STEPS.map((step) => `      - { rule: edge-crosses-10, entity: ${ticker}, step: ${step + 1} }`);
    writeFileSync(file, ['rule_files: [rules/rules.yaml]', 'tests:', '  - name: crosses with rearm', '    source: events', '    steps:', ...steps, '    expect:', ...expected, ''].join('\n'));
    const result = await runCli(['test', file], scene.env);
    expect(result.stdout).toBe(`ok   ${file}: crosses with rearm\n1 passed, 0 failed\n`);
    expect(result.code).toBe(0);
  });
});

/** How many events of the sandbox are on politics now: those the backtest replays for the rule. */
async function politicsEvents(): Promise<number> {
  const api = createApiClient({ baseUrl: scene.sandbox.url, apiKey: 'k' });
  let count = 0;
  try {
    for await (const page of api.eventPages()) count += page.rows.filter((row) => row.series_category === 'politics').length;
  } finally {
    await api.close();
  }
  return count;
}
