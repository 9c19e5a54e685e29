// The command line as users and their scripts call it: real processes, the sandbox over HTTP.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { BIN, runCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/pipeline.ts';

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

let sandbox: Sandbox;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, apiKey: 'cli-key', credits: 6 });
  dir = tempDir();
  mkdirSync(path.join(dir, 'rules'));
  writeFileSync(path.join(dir, 'rules', 'rules.yaml'), RULES);
  env = {
    EDGEWATCH_API_URL: sandbox.url,
    EDGEWATCH_API_KEY: 'cli-key',
    EDGEWATCH_DB: path.join(dir, 'edgewatch.db'),
    EDGEWATCH_RULES: path.join(dir, 'rules'),
  };
});

afterAll(async () => {
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
});

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
    expect(result.stdout).toBe(`${path.join(leaky, 'a.yaml')}:5:13: rule "x": source: unknown source "\${MY_SOURCE}" (events, kpis, reports, runs)\n`);
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
    const runId = started.stdout.trim();
    expect(runId).toMatch(/^[0-9a-f-]{36}$/);

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

  it('rejects unknown commands and flags with usage', async () => {
    expect((await runCli(['frobnicate'], env)).code).toBe(2);
    const badFlag = await runCli(['alerts', '--limt', '3'], env);
    expect(badFlag.code).toBe(2);
    expect(badFlag.stderr).toMatch(/limt/);
  });
});
