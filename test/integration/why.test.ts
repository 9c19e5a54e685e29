// `why <rule> <entity>` as users call it, after real polls of the sandbox: a rule that fired, one
// held by its filter, one disarmed, one in cooldown.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startSandboxWithRules, type SandboxWithRules } from '../helpers/cli.ts';
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

  it('names an unknown rule or entity in one line and exits 1', async () => {
    const rule = await runCli(['why', 'edge-over-1O', ticker], scene.env);
    expect(rule).toMatchObject({ code: 1, stdout: '', stderr: 'edgewatch why: unknown rule edge-over-1O (did you mean edge-over-10?)\n' });
    const entity = await runCli(['why', 'edge-over-10', 'KXNOSUCH'], scene.env);
    expect(entity).toMatchObject({ code: 1, stdout: '', stderr: 'edgewatch why: unknown entity KXNOSUCH: no events snapshot of it is stored (rule edge-over-10 is on events)\n' });
  });
});
