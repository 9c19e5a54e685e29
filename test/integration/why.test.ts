// `why <rule> <entity>` as users call it, after real polls of the sandbox: a rule that fired, one
// held by its filter, one disarmed, one in cooldown; a dwell's progress, the silences and `unless`
// entries that apply; and the built-in sandbox's clock, which the daemon judges by.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { DEFAULT_START } from '../../src/sandbox/index.ts';
import { SANDBOX_WORLD_KEY } from '../../src/service/app.ts';
import { runCli, startSandboxWithRules, type SandboxWithRules } from '../helpers/cli.ts';
import { tempDir, writeRules } from '../helpers/files.ts';
import { openSql } from '../helpers/sql.ts';

const RULES = `
channels:
  screen: { type: console }
rules:
  - name: edge-over-10
    source: events
    trigger: { type: crosses, field: edge_pp, above: 10, abs: true, rearm: 2 }
    notify: [screen]
    cooldown: 2h
  - name: confident-edge-over-10
    source: events
    trigger: { type: crosses, field: edge_pp, above: 10, abs: true, rearm: 2 }
    filter: { confidence_score: { gte: 9.9 } }
    notify: [screen]
  - name: edge-held-over-20
    source: events
    trigger: { type: crosses, field: edge_pp, above: 20, abs: true }
    for: 1h
    unless:
      - { filter: { confidence_score: { lt: 3 } } }
      - { source: reports, filter: { trust_label: [Avoid] } }
    notify: [screen]
`;

let scene: SandboxWithRules;
let ticker: string;

beforeAll(async () => {
  scene = await startSandboxWithRules({ rules: RULES, sandbox: { seed: 11 } });
  ticker = scene.sandbox.world.eventTickers()[0]!;
  scene.sandbox.world.updateEvent(ticker, { edge_pp: 5, confidence_score: 5 });
  expect((await runCli(['poll', '--once'], scene.env)).code).toBe(0); // the baseline
});

afterAll(() => scene.close());

/** The event's edge set on the sandbox, then one poll. */
async function pollWithEdge(edge: number): Promise<void> {
  scene.sandbox.world.updateEvent(ticker, { edge_pp: edge });
  const poll = await runCli(['poll', '--once'], scene.env);
  expect(poll.code).toBe(0);
}

async function why(rule: string, entity = ticker): Promise<string[]> {
  const result = await runCli(['why', rule, entity], scene.env);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return result.stdout.trimEnd().split('\n');
}

function lastAlertId(rule: string): string {
  const sql = openSql(scene.dbPath);
  try {
    return (sql.prepare('SELECT id FROM alerts WHERE rule = ? ORDER BY rowid DESC LIMIT 1').get(rule) as { id: string }).id;
  } finally {
    sql.close();
  }
}

describe('why', () => {
  it('explains a rule that fired and one held by its filter, then one disarmed, then one in cooldown', async () => {
    await pollWithEdge(12);
    const fired = await why('edge-over-10');
    const id = lastAlertId('edge-over-10');
    expect(fired[0]).toMatch(new RegExp(`^edge-over-10 on ${ticker}, at the snapshot stored \\S+: the trigger fired and the alert was due\\.$`));
    expect(fired).toContain('Trigger: edge_pp crosses above 10 in absolute value, re-arms at 8; edge_pp was 5, is 12, beyond the threshold.');
    expect(fired).toContainEqual(expect.stringMatching(/^Armed: no, since \S+: it re-arms once the absolute value of edge_pp is at 8 or less \(it is 12\)\.$/));
    expect(fired).toContain('Filter: none, so every entity is reported.');
    expect(fired).toContainEqual(expect.stringMatching(/^Cooldown 2h: running since it fired at \S+, until \S+: a firing before then is held back\.$/));
    expect(fired.at(-1)).toMatch(new RegExp(`^Last alert: ${id}, fired at \\S+: .*edge \\+12\\.0 pp crossed above 10 pp$`));

    const held = await why('confident-edge-over-10');
    expect(held[0]).toMatch(/: the trigger fired, but the filter does not hold, so no alert \(the crossing still disarmed the rule\)\.$/);
    expect(held).toContain('Filter confidence_score ≥ 9.9: does not hold (confidence_score is 5).');
    expect(held).toContain('Cooldown: none.');
    expect(held.at(-1)).toBe('Last alert: none for this entity.');

    await pollWithEdge(11);
    const disarmed = await why('edge-over-10');
    expect(disarmed[0]).toMatch(/: the trigger did not fire\.$/);
    expect(disarmed).toContainEqual(expect.stringMatching(/^Armed: no, since \S+: it re-arms once the absolute value of edge_pp is at 8 or less \(it is 11\)\.$/));
    expect(disarmed.at(-1)).toMatch(new RegExp(`^Last alert: ${id}, `));

    await pollWithEdge(7);
    const rearmed = await why('edge-over-10');
    expect(rearmed).toContainEqual(expect.stringMatching(/^Armed: yes, since \S+: the next crossing fires\.$/));

    await pollWithEdge(-13);
    const cooling = await why('edge-over-10');
    expect(cooling[0]).toMatch(/: the trigger fired, but the cooldown held the alert back\.$/);
    expect(cooling).toContainEqual(expect.stringMatching(/^Cooldown 2h: running since it fired at \S+, until \S+: a firing before then is held back\.$/));
    expect(cooling.at(-1)).toMatch(new RegExp(`^Last alert: ${id}, `));
  });

  it('explains a pending dwell\'s progress, the silences that match and each unless entry', async () => {
    const before = await why('edge-held-over-20');
    expect(before).toContain('Dwell 1h: not waiting; a crossing starts a wait of 1h, and the alert fires if the value is still beyond then.');
    expect(before).toContain('Silences: none active for this rule and entity.');
    expect((await why('edge-over-10'))).toContain('Unless: none, so no alert is inhibited.');

    await pollWithEdge(25);
    const waiting = await why('edge-held-over-20');
    expect(waiting[0]).toMatch(/: the value crossed the threshold: the alert waits until it has stayed beyond for 1h \(see Dwell\)\.$/);
    const dwell = waiting.find((line) => line.startsWith('Dwell'));
    const [, started, passed, due] = /^Dwell 1h: waiting since (\S+), (\d+)s of 1h passed; complete at (\S+) if the value stays beyond until then\.$/.exec(dwell ?? '') ?? [];
    expect(dwell).toBeDefined();
    expect(Date.parse(due!) - Date.parse(started!)).toBe(3_600_000);
    expect(Number(passed)).toBeLessThan(60);
    expect(waiting).toContain('Unless confidence_score < 3 (on its own snapshot): does not hold (confidence_score is 5).');
    expect(waiting).toContain('Unless trust_label in Avoid (on the event\'s latest reports snapshot): does not hold: no reports snapshot of this event is stored.');

    const silence = await runCli(['silence', 'add', '--rule', 'edge-held-*', '--entity', ticker, '--for', '2h', '--comment', 'desk review'], scene.env);
    expect(silence.code).toBe(0);
    const other = await runCli(['silence', 'add', '--rule', 'kpi-*', '--for', '2h'], scene.env);
    expect(other.code).toBe(0);
    scene.sandbox.world.updateEvent(ticker, { confidence_score: 2 });
    expect((await runCli(['poll', '--once'], scene.env)).code).toBe(0);
    const held = await why('edge-held-over-20');
    expect(held.filter((line) => line.startsWith('Silence'))).toEqual([
      expect.stringMatching(new RegExp(`^Silence ${silence.stdout.trim()} \\(rule=edge-held-\\*, entity=${ticker}\\): active until \\S+ \\(desk review\\): an alert firing now is stored, not sent\\.$`)),
    ]);
    expect(held).toContain('Unless confidence_score < 3 (on its own snapshot): holds on it (confidence_score is 2), so an alert firing now is inhibited.');
  });

  it('judges cooldown by the built-in sandbox\'s clock, as the daemon does, not the wall clock', async () => {
    const dir = tempDir('edgewatch-why-clock-');
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const env = {
      EDGEWATCH_DB: path.join(dir, 'edgewatch.db'),
      EDGEWATCH_RULES: writeRules(dir, ['channels:', '  screen: { type: console }', 'rules:', '  - name: edge-moved', '    source: events', '    trigger: { type: moves, field: edge_pp, by: 0.1 }', '    notify: [screen]', '    cooldown: 1d', ''].join('\n')),
    };
    const hoursIn = (hours: number) => new Date(Date.parse(DEFAULT_START) + hours * 3_600_000).toISOString();
    /** The world's clock as a daemon saves it after each poll. */
    const saveWorld = (hours: number) => {
      const sql = openSql(env.EDGEWATCH_DB);
      try {
        sql.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)').run(SANDBOX_WORLD_KEY, JSON.stringify({ seed: 1, start: hoursIn(0), now: hoursIn(hours) }));
      } finally {
        sql.close();
      }
    };
    expect((await runCli(['poll', '--once'], env)).code).toBe(0); // the baseline, at the world's start
    saveWorld(6);
    expect((await runCli(['poll', '--once'], env)).code).toBe(0); // six hours on: edges moved
    saveWorld(8);
    const sql = openSql(env.EDGEWATCH_DB);
    // The rule's memory keeps when it fired on the clock it judges cooldown by: the world's.
    const fired = sql.prepare("SELECT entity_key, last_fired_at AS fired_at FROM rule_state WHERE rule = 'edge-moved' AND last_fired_at IS NOT NULL LIMIT 1").get() as { entity_key: string; fired_at: string } | undefined;
    sql.close();
    expect(fired).toBeDefined();
    // The world's clock is days behind the wall clock: by the wall clock this cooldown would be over.
    expect(Date.parse(fired!.fired_at) + 86_400_000).toBeLessThan(Date.now());
    const result = await runCli(['why', 'edge-moved', fired!.entity_key], env);
    expect(result.code).toBe(0);
    const firedMs = Date.parse(fired!.fired_at);
    expect(result.stdout).toContain(`Cooldown 1d: running since it fired at ${new Date(firedMs).toISOString()}, until ${new Date(firedMs + 86_400_000).toISOString()}: a firing before then is held back.\n`);
  });

  it('names an unknown rule or entity in one line and exits 1', async () => {
    const rule = await runCli(['why', 'edge-over-1O', ticker], scene.env);
    expect(rule).toMatchObject({ code: 1, stdout: '', stderr: 'edgewatch why: unknown rule edge-over-1O (did you mean edge-over-10?)\n' });
    const entity = await runCli(['why', 'edge-over-10', 'KXNOSUCH'], scene.env);
    expect(entity).toMatchObject({ code: 1, stdout: '', stderr: 'edgewatch why: unknown entity KXNOSUCH: no events snapshot of it is stored (rule edge-over-10 is on events)\n' });
  });
});
