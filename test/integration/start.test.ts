// The newcomer's path: `edgewatch run` (what `npm start` runs) from the repository with no API URL
// starts the built-in sandbox with the example rules and prints an alert within 60 seconds.
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { BIN, REPO } from '../helpers/cli.ts';
import { childEnv, startDaemonChild, type DaemonChild } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/files.ts';
import { waitFor } from '../helpers/wait.ts';

let dir: string;
let daemon: DaemonChild | undefined;

beforeEach(() => {
  dir = tempDir('edgewatch-start-');
});

afterEach(async () => {
  await daemon?.kill();
  rmSync(dir, { recursive: true, force: true });
});

it('prints a first alert within 60 seconds on the built-in sandbox, and `alerts` lists it', async () => {
  const env = { EDGEWATCH_DB: path.join(dir, 'edgewatch.db'), EDGEWATCH_PORT: '0', EDGEWATCH_LOG_LEVEL: 'debug' };
  const started = Date.now();
  daemon = await startDaemonChild(env);

  // The first lines say where it runs, where to look and how to go live.
  const intro = daemon.logs().slice(0, 4).map((l) => l.msg).join('\n');
  expect(intro).toMatch(/built-in sandbox.*http:\/\/127\.0\.0\.1:\d+\/v1/);
  expect(intro).toContain(`status page: ${daemon.url}`);
  expect(intro).toMatch(/EDGEWATCH_API_URL.*EDGEWATCH_API_KEY/);

  const line = await waitFor('an alert on standard output', () => daemon!.stdout().find((l) => /^\[(info|warning|critical)\] [a-z0-9-]+ \S+: /.test(l)), 60_000);
  const seconds = (Date.now() - started) / 1000;
  expect(seconds).toBeLessThan(60);

  // `generate` with no API URL reaches the daemon's sandbox, so the daemon watches the run.
  const run = promisify(execFile);
  const cli = (...args: string[]) => run(process.execPath, [BIN, ...args], { cwd: REPO, env: childEnv(env) });
  const sandboxUrl = /at (http:\/\/127\.0\.0\.1:\d+\/v1)/.exec(intro)![1]!;
  const list = (await (await fetch(`${sandboxUrl}/predictions/events?limit=200&include=eligibility`, { headers: { authorization: 'Bearer any' } })).json()) as {
    data: Array<{ event_ticker: string; eligibility_status: string }>;
  };
  const open = list.data.find((row) => row.eligibility_status === 'open')!;
  const detail = (await (await fetch(`${sandboxUrl}/predictions/events/${open.event_ticker}`, { headers: { authorization: 'Bearer any' } })).json()) as { venue: string; slug: string };
  const generated = await cli('generate', detail.venue, detail.venue === 'venueb' ? detail.slug : open.event_ticker);
  expect(generated.stderr).toBe('');
  const runId = /^run ([0-9a-f-]{36}) started for /.exec(generated.stdout)![1]!;
  await waitFor('the daemon polling the run', () => daemon!.logs().some((l) => l.source === 'runs' && l.msg === 'polled' && l.idle === false), 20_000);

  const stop = await daemon.signal('SIGTERM');
  expect(stop.code).toBe(0);

  const { stdout } = await cli('alerts', '--json', '--limit', '500');
  const listed = JSON.parse(stdout) as Array<{ rule: string; entity: string }>;
  const [, rule, entity] = /^\[\w+\] (\S+) (\S+):/.exec(line)!;
  expect(listed.some((a) => a.rule === rule && a.entity === entity)).toBe(true);
  expect((await cli('runs')).stdout).toContain(runId);
}, 90_000);
