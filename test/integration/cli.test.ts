// The command line as users and their scripts call it: real processes, the sandbox over HTTP.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { openStore } from '../../src/store/index.ts';
import { BIN, runCli, startSandboxWithRules, type RunCliOptions, type SandboxWithRules } from '../helpers/cli.ts';

const RULES = `
channels:
  screen: { type: console }
rules:
  - name: edge-over-10
    source: events
    trigger: { type: crosses, field: edge_pp, above: 10, abs: true }
    notify: [screen]
  - name: run-finished
    source: runs
    trigger: { type: changes, field: status, to: [completed, failed] }
    notify: [screen]
`;

let scene: SandboxWithRules;
let sandbox: Sandbox;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  scene = await startSandboxWithRules({ rules: RULES, sandbox: { apiKey: 'cli-key', credits: 6 } });
  ({ sandbox, dir, env } = scene);
});

afterAll(() => scene.close());

describe('edgewatch command line', () => {
  it('validates the example rules shipped in rules/', async () => {
    const result = await runCli(['validate'], {});
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(/valid/);
    expect(result.code).toBe(0);
  });

  it('reports every problem of an invalid rules folder as file:line:column and exits 1', async () => {
    const bad = path.join(dir, 'bad-rules');
    mkdirSync(bad);
    writeFileSync(
      path.join(bad, 'a.yaml'),
      ['channels:', '  screen: { type: console }', 'rules:', '  - name: x', '    source: event', '    trigger: { type: new }', '    notify: [screen]', ''].join('\n'),
    );
    const result = await runCli(['validate'], { EDGEWATCH_RULES: bad });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(new RegExp(`^${bad.replace(/[/\\]/g, '.')}/a\\.yaml:5:13: .*source`, 'm'));
  });

  it('quotes a value from the environment as written, never its value', async () => {
    const leaky = path.join(dir, 'leaky-rules');
    mkdirSync(leaky);
    writeFileSync(
      path.join(leaky, 'a.yaml'),
      ['channels:', '  screen: { type: console }', 'rules:', '  - name: x', '    source: ${MY_SOURCE}', '    trigger: { type: new }', '    notify: [screen]', ''].join('\n'),
    );
    const result = await runCli(['validate'], { EDGEWATCH_RULES: leaky, MY_SOURCE: 'sk-live-do-not-print' });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe(`${path.join(leaky, 'a.yaml')}:5:13: rule "x": source: unknown source "\${MY_SOURCE}" (events, kpis, reports, runs, edge, rankings, markets, similar, baskets)\n`);
    expect(result.stderr).not.toContain('sk-live-do-not-print');
  });

  it('reports a broken template as file:line:column and exits 1', async () => {
    const templates = path.join(dir, 'templates');
    mkdirSync(templates);
    writeFileSync(path.join(templates, 'edge.text.liquid'), 'Edge on {{ alert.entity \n');
    const result = await runCli(['validate'], { EDGEWATCH_TEMPLATES: templates });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(new RegExp(`^${templates.replace(/[/\\]/g, '.')}/edge\\.text\\.liquid:1:9: `, 'm'));
  });

  it('polls: a baseline, then a crossing printed by the console channel, and --dry-run changes nothing', async () => {
    const [ticker] = sandbox.world.eventTickers();
    sandbox.world.updateEvent(ticker!, { edge_pp: 1 });
    const baseline = await runCli(['poll', '--once'], env);
    expect(baseline.code).toBe(0);
    expect(baseline.stdout).toBe('');

    sandbox.world.updateEvent(ticker!, { edge_pp: 14 });
    const dry = await runCli(['poll', '--once', '--dry-run'], env);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(new RegExp(`edge-over-10 ${ticker}`));
    const noAlertsYet = await runCli(['alerts', '--json'], env);
    expect(JSON.parse(noAlertsYet.stdout)).toEqual([]);

    const real = await runCli(['poll', '--once'], env);
    expect(real.code).toBe(0);
    expect(real.stdout).toMatch(new RegExp(`^\\[info\\] edge-over-10 ${ticker}: .*crossed above 10`, 'm'));
    const alerts = JSON.parse((await runCli(['alerts', '--json'], env)).stdout) as Array<Record<string, unknown>>;
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({ rule: 'edge-over-10', entity: ticker, source: 'events', trigger: 'crosses' });
    expect(alerts[0]!.deliveries).toEqual([{ channel: 'screen', status: 'delivered', attempts: 1, last_error: null }]);
  });

  it('exits 1 when a source fails, and still polls the others', async () => {
    sandbox.inject({ path: '/v1/predictions/kpi-events', status: 400, count: 1 });
    const result = await runCli(['poll', '--once'], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/source kpis failed/);
    expect(result.stderr).not.toMatch(/source events failed/);
    expect(result.stderr).not.toContain('cli-key');
  });

  it('starts a generation, lists the run, and reports its completion', async () => {
    const ticker = sandbox.world.addEvent(); // new events are open, on venuea
    const started = await runCli(['generate', 'venuea', ticker], env);
    expect(started.code).toBe(0);
    const runId = /^run ([0-9a-f-]{36}) started for (\S+) \(3 credits\); the daemon will announce its completion\n$/.exec(started.stdout)?.[1] ?? 'none printed';
    expect(started.stdout).toBe(`run ${runId} started for venuea/${ticker} (3 credits); the daemon will announce its completion\n`);

    const runs = await runCli(['runs'], env);
    expect(runs.stdout).toMatch(new RegExp(`${runId}\\s+processing`));

    sandbox.world.finishRun(runId, 'failed');
    const polled = await runCli(['poll', '--once'], env);
    expect(polled.stdout).toMatch(new RegExp(`run-finished ${runId}:`));
    expect((await runCli(['runs'], env)).stdout).toMatch(new RegExp(`${runId}\\s+failed`));
  });

  it('exits non-zero with the API error code when a generation is refused', async () => {
    // 6 credits, 3 spent above and refunded when the run failed: spend them all, then one more.
    const open = [sandbox.world.addEvent(), sandbox.world.addEvent(), sandbox.world.addEvent()];
    for (const ticker of open.slice(0, 2)) expect((await runCli(['generate', 'venuea', ticker], env)).code).toBe(0);
    const refused = await runCli(['generate', 'venuea', open[2]!], env);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/insufficient_credits/);
  });

  it('serves the sandbox alone: address on the first line, the key required, events page by page', async () => {
    const child = spawn(process.execPath, [BIN, 'sandbox', '--port', '0'], {
      env: { PATH: process.env.PATH ?? '', EDGEWATCH_API_KEY: 'sandbox-key' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const [chunk] = (await once(child.stdout, 'data')) as [Buffer];
      const url = /^edgewatch sandbox listening on (http:\/\/127\.0\.0\.1:\d+\/v1)\n/.exec(chunk.toString())?.[1];
      expect(url).toBeDefined();
      const get = (query: string, key?: string) =>
        fetch(`${url}/predictions/events?${query}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
      expect((await get('limit=5')).status).toBe(401);
      expect((await get('limit=5', 'wrong')).status).toBe(401);
      const seen = new Set<string>();
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page = (await (await get(`limit=25${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, 'sandbox-key')).json()) as {
          data: Array<{ event_ticker: string }>;
          next_cursor: string | null;
          has_more: boolean;
        };
        for (const row of page.data) seen.add(row.event_ticker);
        cursor = page.has_more ? page.next_cursor : null;
        pages++;
      } while (cursor);
      expect(pages).toBeGreaterThan(2);
      expect(seen.size).toBe(60);
      child.kill('SIGTERM');
      const [code] = (await once(child, 'exit')) as [number | null];
      expect(code).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('rejects unknown commands and options in one line naming them, with a suggestion, and exits 2', async () => {
    const unknownCommand = await runCli(['alert'], env);
    expect(unknownCommand.code).toBe(2);
    expect(unknownCommand.stderr).toMatch(/^edgewatch: unknown command alert \(did you mean alerts\?\)\n\nusage: edgewatch <command>\n/);
    const badFlag = await runCli(['alerts', '--limt', '3'], env);
    expect(badFlag.code).toBe(2);
    expect(badFlag.stderr).toBe('edgewatch alerts: unknown option --limt (did you mean --limit?)\n');
    const cases: Array<[string[], string]> = [
      [['alerts', '--limit'], 'edgewatch alerts: option --limit needs a value (--limit N)\n'],
      [['alerts', '--json=yes'], 'edgewatch alerts: option --json takes no value\n'],
      [['runs', 'all'], 'edgewatch runs: unexpected argument all (usage: edgewatch runs [--json])\n'],
      [['generate', 'venuea'], 'edgewatch generate: missing <event_key> (usage: edgewatch generate <venue> <event_key>)\n'],
      [['poll', '-x'], 'edgewatch poll: unknown option -x (usage: edgewatch poll --once [--dry-run])\n'],
    ];
    for (const [args, stderr] of cases) expect(await runCli(args, env)).toEqual({ code: 2, stdout: '', stderr });
  });

  it('prints the version with --version, exit 0', async () => {
    const { version } = JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../../package.json'), 'utf8')) as { version: string };
    expect(await runCli(['--version'], {})).toEqual({ code: 0, stdout: `edgewatch ${version}\n`, stderr: '' });
  });

  it('prints every command\'s own usage with <command> --help, exit 0, whatever else is on the line', async () => {
    for (const [args, usage] of [
      [['run', '--help'], 'usage: edgewatch run\n'],
      [['poll', '--help'], 'usage: edgewatch poll --once [--dry-run]\n'],
      [['validate', '-h'], 'usage: edgewatch validate\n'],
      [['generate', '--help'], 'usage: edgewatch generate <venue> <event_key>\n'],
      [['runs', '--help'], 'usage: edgewatch runs [--json]\n'],
      [['alerts', '--limt', '--help'], 'usage: edgewatch alerts [--limit N] [--json]\n'],
      [['digest', '--help'], 'usage: edgewatch digest --flush\n'],
      [['sandbox', '--help'], 'usage: edgewatch sandbox [--port P]\n'],
      [['help', 'alerts'], 'usage: edgewatch alerts [--limit N] [--json]\n'],
    ] as Array<[string[], string]>) {
      const result = await runCli(args, env);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout.startsWith(usage)).toBe(true);
      expect(result.stdout).toMatch(/-h, --help +show this help\n$/);
    }
    const alerts = (await runCli(['alerts', '--help'], env)).stdout;
    expect(alerts).toMatch(/^ {2}--limit N +how many alerts, newest first \(default 20\)$/m);
    const general = await runCli(['--help'], {});
    expect(general.code).toBe(0);
    expect(general.stdout).toMatch(/^ {2}generate <venue> <event_key> +start a report generation/m);
  });

  it('warns on standard error about a misspelt EDGEWATCH_ variable, and carries on', async () => {
    const result = await runCli(['alerts', '--json'], { ...env, EDGEWATCH_POLL_EVNETS: '5m' });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('edgewatch: warning: unknown variable EDGEWATCH_POLL_EVNETS, did you mean EDGEWATCH_POLL_EVENTS?\n');
    expect(Array.isArray(JSON.parse(result.stdout))).toBe(true);
  });

  it('names the variable and what it needs when a duration is zero', async () => {
    const result = await runCli(['poll', '--once'], { ...env, EDGEWATCH_POLL_EVENTS: '0s' });
    expect(result).toEqual({ code: 1, stdout: '', stderr: 'edgewatch: EDGEWATCH_POLL_EVENTS: must be at least 1s: 0s\n' });
  });

  it('says in one line which database path cannot be used when its parent is a file, for every command', async () => {
    const file = path.join(dir, 'not-a-folder');
    writeFileSync(file, '');
    const dbPath = path.join(file, 'edgewatch.db');
    const line = `edgewatch: cannot open database ${dbPath}: ${file} is a file, not a folder\n`;
    expect(await runCli(['alerts'], { ...env, EDGEWATCH_DB: dbPath })).toEqual({ code: 1, stdout: '', stderr: line });
    expect(await runCli(['run'], { ...env, EDGEWATCH_DB: dbPath, EDGEWATCH_PORT: '0' })).toEqual({ code: 1, stdout: '', stderr: line });
  });

  it('ends poll --once in one line naming the database and the cause when the disk is full during delivery, exit 1', async () => {
    const fullEnv = { ...env, EDGEWATCH_DB: path.join(dir, 'full.db') };
    const [ticker] = sandbox.world.eventTickers();
    sandbox.world.updateEvent(ticker!, { edge_pp: 2 });
    expect((await runCli(['poll', '--once'], fullEnv)).code).toBe(0);
    sandbox.world.updateEvent(ticker!, { edge_pp: 15 });
    // The alert and its delivery are stored; settling the delivery then fails, as on a full disk.
    const other = new SqliteDatabase(fullEnv.EDGEWATCH_DB);
    other.exec("CREATE TRIGGER disk_full BEFORE UPDATE ON deliveries BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END");
    other.close();
    const result = await runCli(['poll', '--once'], fullEnv);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`edgewatch: database ${fullEnv.EDGEWATCH_DB}: database or disk is full (SQLITE_CONSTRAINT_TRIGGER)\n`);
  });

  it('refuses to generate on the built-in sandbox when no daemon runs to watch the run: exit 1, nothing started or recorded', async () => {
    const alone = { EDGEWATCH_DB: path.join(dir, 'no-daemon.db'), EDGEWATCH_RULES: env.EDGEWATCH_RULES! };
    const result = await runCli(['generate', 'venuea', sandbox.world.eventTickers()[0]!], alone);
    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr: 'edgewatch generate: no daemon is running on the built-in sandbox, so nothing would watch the run: start one with `npm start` first (or set EDGEWATCH_API_URL)\n',
    });
    expect(JSON.parse((await runCli(['runs', '--json'], alone)).stdout)).toEqual([]);
  });

  it('says that the first poll is a baseline that fires nothing, with --dry-run too', async () => {
    const fresh = { ...env, EDGEWATCH_DB: path.join(dir, 'fresh.db') };
    const baseline = 'edgewatch poll: first poll of events, kpis: a baseline, which stores what it sees and fires nothing';
    const dry = await runCli(['poll', '--once', '--dry-run'], fresh);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toBe('');
    expect(dry.stderr).toContain(`${baseline} (--dry-run stored nothing, so the next poll is the baseline again)\n`);
    const real = await runCli(['poll', '--once'], fresh);
    expect(real.code).toBe(0);
    expect(real.stderr).toContain(`${baseline} (the next poll fires on what changed since)\n`);
    const after = await runCli(['poll', '--once', '--dry-run'], fresh);
    expect(after.stderr).not.toContain('baseline');
  });

  it('strips terminal escape sequences and control characters from API text in the alerts and runs tables', async () => {
    const escapes = { ...env, EDGEWATCH_DB: path.join(dir, 'escapes.db') };
    const ticker = sandbox.world.eventTickers()[5]!;
    sandbox.world.updateEvent(ticker, { edge_pp: 1 });
    expect((await runCli(['poll', '--once'], escapes)).code).toBe(0);
    const evil = 'Evil\x1b[2J\x1b[H \x1b]0;pwned\x07name\x9b31m\tnow\x07';
    sandbox.world.updateEvent(ticker, { edge_pp: 14, name: evil });
    expect((await runCli(['poll', '--once'], escapes)).code).toBe(0);
    // A run as an upstream could describe it (the sandbox's statuses are plain).
    const other = new SqliteDatabase(escapes.EDGEWATCH_DB);
    other
      .prepare('INSERT INTO runs (run_id, venue, event_key, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run('00000000-0000-4000-8000-000000000001', 'venuea', 'KX\x1b]8;;https://evil.example\x1b\\LINK', 'completed\x1b[8m\n', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z');
    other.close();
    const controls = /[\x00-\x09\x0b-\x1f\x7f-\x9f]/;

    const alerts = await runCli(['alerts'], escapes);
    expect(alerts.code).toBe(0);
    expect(alerts.stdout).not.toMatch(controls);
    expect(alerts.stdout).toMatch(new RegExp(`^\\S+ {2}\\[info\\] edge-over-10 {2}events/${ticker} {2}Evil name now: edge \\+14`, 'm'));
    const runs = await runCli(['runs'], escapes);
    expect(runs.stdout).not.toMatch(controls);
    expect(runs.stdout).toMatch(/^00000000-0000-4000-8000-000000000001 {2}completed {3}venuea\/KXLINK {2}started /m);

    // JSON keeps the data as it came, every control character escaped.
    const listed = await runCli(['alerts', '--json'], escapes);
    expect(listed.stdout).not.toMatch(controls);
    const summaries = (JSON.parse(listed.stdout) as Array<{ entity: string; summary: string }>).filter((a) => a.entity === ticker).map((a) => a.summary);
    expect(summaries).toEqual([expect.stringContaining('Evil\x1b[2J\x1b[H \x1b]0;pwned\x07name\x9b31m now\x07: edge')]);
  });
});

describe('a database the user may only read', () => {
  // Root may write any file whatever its mode, so as root the commands run as nobody.
  const reader: RunCliOptions = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};

  it('is listed by alerts and runs, its folder read-only too, and nothing is written', async () => {
    const folder = path.join(dir, 'read-only');
    mkdirSync(folder);
    const readOnly = { ...env, EDGEWATCH_DB: path.join(folder, 'edgewatch.db') };
    const ticker = sandbox.world.eventTickers()[7]!;
    sandbox.world.updateEvent(ticker, { edge_pp: 1 });
    expect((await runCli(['poll', '--once'], readOnly)).code).toBe(0);
    sandbox.world.updateEvent(ticker, { edge_pp: 13 });
    expect((await runCli(['poll', '--once'], readOnly)).code).toBe(0);
    const other = new SqliteDatabase(readOnly.EDGEWATCH_DB);
    other
      .prepare('INSERT INTO runs (run_id, venue, event_key, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run('00000000-0000-4000-8000-000000000002', 'venuea', ticker, 'completed', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z');
    other.close();
    const written = statSync(readOnly.EDGEWATCH_DB).mtimeMs;
    chmodSync(readOnly.EDGEWATCH_DB, 0o444);
    chmodSync(folder, 0o555);
    chmodSync(dir, 0o755);
    try {
      const alerts = await runCli(['alerts', '--json'], readOnly, reader);
      expect(alerts.stderr).toBe('');
      expect(alerts.code).toBe(0);
      expect((JSON.parse(alerts.stdout) as Array<{ rule: string; entity: string }>).filter((a) => a.entity === ticker).map((a) => a.rule)).toEqual(['edge-over-10']);
      const runs = await runCli(['runs'], readOnly, reader);
      expect(runs.stderr).toBe('');
      expect(runs.code).toBe(0);
      expect(runs.stdout).toMatch(new RegExp(`^00000000-0000-4000-8000-000000000002 {2}completed {3}venuea/${ticker} `, 'm'));
      expect(readdirSync(folder)).toEqual(['edgewatch.db']);
      expect(statSync(readOnly.EDGEWATCH_DB).mtimeMs).toBe(written);
    } finally {
      chmodSync(folder, 0o755);
      chmodSync(dir, 0o700);
    }
  });

  it('says in one line that a database needs a migration, and leaves it as it was', async () => {
    const dbPath = path.join(dir, 'old.db');
    await (await openStore(dbPath)).close();
    const other = new SqliteDatabase(dbPath);
    const latest = other.prepare<[], { name: string }>('SELECT max(name) AS name FROM kysely_migration').get()!.name;
    other.prepare('DELETE FROM kysely_migration WHERE name = ?').run(latest);
    other.close();
    for (const command of ['alerts', 'runs']) {
      expect(await runCli([command], { ...env, EDGEWATCH_DB: dbPath })).toEqual({
        code: 1,
        stdout: '',
        stderr: `edgewatch: database ${dbPath} needs a migration to this version of edgewatch (${latest}): run a command that writes to it, such as edgewatch poll --once, with write access first\n`,
      });
    }
    const after = new SqliteDatabase(dbPath, { readonly: true });
    expect(after.prepare('SELECT name FROM kysely_migration WHERE name = ?').get(latest)).toBeUndefined();
    after.close();
  });
});
