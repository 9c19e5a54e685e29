// Silences from the command line: `silence add` while `run` is up mutes the next alert (stored,
// shown by `alerts` as `silenced`, never sent); bad arguments exit 2 and store nothing.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli, startSandboxWithRules, type SandboxWithRules } from '../helpers/cli.ts';
import { eventsBaselineDone, getJson, startDaemonChild, type DaemonChild } from '../helpers/daemon.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/receivers.ts';
import { openStore } from '../../src/store/index.ts';
import { openSql } from '../helpers/sql.ts';
import { waitFor } from '../helpers/wait.ts';

let scene: SandboxWithRules;
let receiver: WebhookReceiver;
let daemon: DaemonChild | undefined;

beforeEach(async () => {
  scene = await startSandboxWithRules({ sandbox: { events: 20, kpis: 5 }, dirPrefix: 'edgewatch-silence-' });
  receiver = await startWebhookReceiver();
});

afterEach(async () => {
  await daemon?.kill();
  daemon = undefined;
  await receiver.close();
  await scene.close();
});

const cli = (args: string[]) => runCli(args, { ...scene.env, USER: 'ann' });

interface Listed {
  rule: string;
  entity: string;
  deliveries: Array<{ channel: string; status: string }>;
}

describe('silence', () => {
  it('a silence made with the CLI while run is up mutes the next alert: alerts shows it silenced, nothing is sent', async () => {
    const [muted, other] = scene.sandbox.world.eventTickers() as [string, string];
    for (const ticker of [muted, other]) scene.sandbox.world.updateEvent(ticker, { edge_pp: 0 });
    writeFileSync(
      path.join(scene.rulesDir, 'rules.yaml'),
      `channels:\n  hook: { type: webhook, url: "${receiver.url}" }\nrules:\n  - { name: edge-over-10, source: events, trigger: { type: crosses, field: edge_pp, above: 10, abs: true }, filter: { event_ticker: [${muted}, ${other}] }, notify: [hook] }\n`,
    );
    daemon = await startDaemonChild({ ...scene.env, EDGEWATCH_PORT: '0', EDGEWATCH_POLL_EVENTS: '1s', EDGEWATCH_POLL_KPIS: '1s', EDGEWATCH_POLL_REPORTS: '1s', EDGEWATCH_POLL_RUNS: '1s' });
    await eventsBaselineDone(daemon.url);

    const added = await cli(['silence', 'add', '--entity', `${muted.slice(0, 4)}*`, '--rule', 'edge-*', '--for', '2h', '--comment', 'working on it']);
    expect(added).toMatchObject({ code: 0, stderr: '' });
    const id = added.stdout.trim();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const listed = JSON.parse((await cli(['silence', 'list', '--json'])).stdout) as Array<Record<string, unknown>>;
    expect(listed).toEqual([{ id, matchers: { rule: 'edge-*', entity: `${muted.slice(0, 4)}*` }, starts_at: expect.any(String), ends_at: expect.any(String), comment: 'working on it', created_by: 'ann' }]);
    expect(Date.parse(listed[0]!.ends_at as string) - Date.parse(listed[0]!.starts_at as string)).toBe(2 * 3_600_000);
    // The status page's API lists it as active.
    const api = await getJson(`${daemon.url}api/silences`);
    expect(api.body.silences).toEqual(listed);

    scene.sandbox.world.updateEvent(muted, { edge_pp: 15 });
    const alerts = await waitFor('the silenced alert', async () => {
      const rows = JSON.parse((await cli(['alerts', '--json'])).stdout) as Listed[];
      return rows.find((a) => a.entity === muted && a.deliveries[0]?.status === 'silenced') ? rows : undefined;
    }, 30_000);
    expect(alerts.find((a) => a.entity === muted)!.deliveries).toEqual([{ channel: 'hook', status: 'silenced', attempts: 0, last_error: null }]);

    // Expired, the silence mutes nothing more; the alert it muted is never sent.
    expect(await cli(['silence', 'expire', id])).toMatchObject({ code: 0 });
    scene.sandbox.world.updateEvent(other, { edge_pp: 15 });
    await receiver.waitFor('the other alert', (r) => r.json().entity === other, 30_000);
    expect(receiver.requests.filter((r) => r.json().entity === muted)).toEqual([]);
    const shown = (await cli(['silence', 'list'])).stdout;
    expect(shown).toContain(`${id}  expired`);
  }, 90_000);

  // The built-in sandbox's world runs on a simulated clock that rules judge by; silences, like
  // everything stored and shown, are on the wall clock.
  it('on the built-in sandbox, a silence mutes the alerts that fire while it lasts, and they carry the wall-clock time', async () => {
    const env = { EDGEWATCH_DB: scene.dbPath, EDGEWATCH_PORT: '0', USER: 'ann' };
    expect(await runCli(['silence', 'add', '--rule', '*', '--for', '2h'], env)).toMatchObject({ code: 0 });
    const started = Date.now();
    daemon = await startDaemonChild(env);
    const alerts = await waitFor('an alert', async () => {
      const rows = JSON.parse((await runCli(['alerts', '--json'], env)).stdout) as Array<Listed & { fired_at: string }>;
      return rows.length > 0 ? rows : undefined;
    }, 60_000);
    for (const alert of alerts) {
      expect(alert.deliveries.map((d) => d.status)).toEqual(alert.deliveries.map(() => 'silenced'));
      expect(Date.parse(alert.fired_at)).toBeGreaterThanOrEqual(started - 1_000);
      expect(Date.parse(alert.fired_at)).toBeLessThanOrEqual(Date.now());
    }
    expect(daemon.stdout().filter((line) => /^\[(info|warning|critical)\] /.test(line))).toEqual([]);
  }, 90_000);

  it.each([
    { args: ['silence', 'add', '--for', '2h'], message: 'edgewatch silence add: needs at least one matcher: --rule NAME, --entity KEY or --source S (* matches any run of characters)' },
    { args: ['silence', 'add', '--rule', 'x', '--for', '2h', '--until', '2099-01-01T00:00:00Z'], message: 'edgewatch silence add: takes --for or --until, not both' },
    { args: ['silence', 'add', '--rule', 'x', '--until', '2020-01-01T00:00:00Z'], message: 'edgewatch silence add: --until 2020-01-01T00:00:00Z: the end is in the past' },
    { args: ['silence', 'add', '--rule', 'x'], message: 'edgewatch silence add: needs how long: --for DURATION (30m, 2h, 1d) or --until ISO time' },
    { args: ['silence', 'add', '--rule', 'x', '--for', 'soon'], message: 'edgewatch silence add: --for soon: not a duration (write 30m, 2h, 1d)' },
    { args: ['silence', 'add', '--source', 'event', '--for', '1h'], message: 'edgewatch silence add: --source event: unknown source (events, kpis, reports, runs, edge, rankings, markets, similar, baskets, or a glob with *)' },
    { args: ['silence', 'expire', 'nope'], message: 'edgewatch silence expire: no active silence nope (see edgewatch silence list)' },
  ])('$args: one line, exit 2, nothing stored', async ({ args, message }) => {
    // A database that exists, so that "nothing stored" is checked in it.
    await (await openStore(scene.dbPath)).close();
    const result = await cli(args);
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toBe(`${message}\n`);
    const sql = openSql(scene.dbPath);
    try {
      expect(sql.prepare('SELECT COUNT(*) AS n FROM silences').get()).toEqual({ n: 0 });
    } finally {
      sql.close();
    }
  });
});
