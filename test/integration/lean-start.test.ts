// Each command loads what it uses, so that scripts calling `validate`, `alerts` or `--version` start
// quickly: the Slack client, nodemailer, the sandbox, prom-client, the HTTP server (and, outside
// `validate`, LiquidJS) are loaded only by the commands that use them.
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { startSandboxWithRules } from '../helpers/cli.ts';
import { eventsBaselineDone, startDaemonChild } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/files.ts';
import { waitFor } from '../helpers/wait.ts';

import { REPO } from '../helpers/cli.ts';
const RECORDER = path.join(REPO, 'test/helpers/record-imports.mjs');

/** Loaded only by the commands that use them (the daemon, poll, digest, sandbox). */
const DAEMON_ONLY_PACKAGES = ['@slack/web-api', 'nodemailer', 'prom-client', 'node-cron', 'pino', 'pino-pretty'];
const DAEMON_ONLY_MODULES = ['src/sandbox/', 'src/service/daemon.ts', 'src/service/http.ts', 'src/service/metrics.ts', 'src/notify/'];

let dir: string;

beforeEach(() => {
  dir = tempDir('edgewatch-lean-');
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

interface Loaded {
  /** Packages loaded, bundled or from node_modules, by name. */
  packages: string[];
  /** The command line's own sources loaded, bundled (`src/cli/main.ts`). */
  modules: string[];
}

const packageOf = (file: string): string | undefined => /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file)?.[1];

/** What a process that ran with `--import RECORDER` and RECORD_IMPORTS_TO=record loaded: the files of dist/ it read hold what the build's metafile says. */
function loadedFrom(record: string): Loaded {
  const { outputs } = JSON.parse(readFileSync(path.join(REPO, 'dist/metafile.json'), 'utf8')) as { outputs: Record<string, { inputs: Record<string, unknown> }> };
  const files = readFileSync(record, 'utf8')
    .trim()
    .split('\n')
    .filter((url) => url.startsWith('file:'))
    .map((url) => path.relative(REPO, fileURLToPath(url)))
    .flatMap((file) => (file.startsWith('dist/') ? Object.keys(outputs[file]?.inputs ?? {}) : [file]));
  const packages = new Set(files.map(packageOf).filter((name) => name !== undefined));
  return { packages: [...packages].sort(), modules: files.filter((file) => file.startsWith('src/')) };
}

/** Runs one command, and says what it loaded; it must succeed (and, unless `stderr` says otherwise, print nothing on stderr). */
async function loadedBy(args: string[], env: Record<string, string>, stderr: RegExp = /^$/): Promise<Loaded> {
  const record = path.join(dir, `imports-${args.join('-')}.txt`);
  const result = await runCli(args, { ...env, RECORD_IMPORTS_TO: record }, { nodeOptions: ['--import', RECORDER] });
  expect(result.stderr).toMatch(stderr);
  expect(result.code).toBe(0);
  return loadedFrom(record);
}

const daemonOnlyModules = (modules: string[]): string[] => modules.filter((m) => DAEMON_ONLY_MODULES.some((prefix) => m.startsWith(prefix)));

it('validate loads the rules and templates, and none of the daemon, the sandbox, the channels, the metrics or the database', async () => {
  const loaded = await loadedBy(['validate'], { EDGEWATCH_DB: path.join(dir, 'edgewatch.db') });
  expect(loaded.packages).toEqual(expect.arrayContaining(['liquidjs', 'yaml']));
  expect(loaded.packages.filter((name) => DAEMON_ONLY_PACKAGES.includes(name) || ['kysely', 'better-sqlite3', 'undici'].includes(name))).toEqual([]);
  expect(daemonOnlyModules(loaded.modules)).toEqual([]);
});

it('alerts --json reads the database, without LiquidJS, the daemon, the sandbox, the channels or the metrics', async () => {
  const env = { EDGEWATCH_DB: path.join(dir, 'edgewatch.db') };
  expect((await runCli(['alerts', '--json'], env)).code).toBe(0); // creates the database
  const loaded = await loadedBy(['alerts', '--json'], env);
  expect(loaded.packages).toEqual(expect.arrayContaining(['better-sqlite3']));
  expect(loaded.packages.filter((name) => DAEMON_ONLY_PACKAGES.includes(name) || ['liquidjs', 'sanitize-html', 'undici'].includes(name))).toEqual([]);
  expect(daemonOnlyModules(loaded.modules)).toEqual([]);
});

it('--version loads no package at all', async () => {
  const loaded = await loadedBy(['--version'], {});
  expect(loaded.modules).toContain('src/cli/main.ts');
  expect(loaded.packages).toEqual([]);
});

/** The channel clients no configuration asked for: created on first use, not at start. */
const CHANNEL_CLIENTS = ['@slack/web-api', 'nodemailer'];
const CONSOLE_RULES = `
channels:
  screen: { type: console }
rules:
  - name: edge-over-10
    source: events
    trigger: { type: crosses, field: edge_pp, above: 10, abs: true }
    notify: [screen]
`;

it('the alerts and runs tables strip control characters without LiquidJS or sanitize-html', async () => {
  const env = { EDGEWATCH_DB: path.join(dir, 'edgewatch.db') };
  expect((await runCli(['alerts', '--json'], env)).code).toBe(0); // creates the database
  for (const command of ['alerts', 'runs']) {
    const loaded = await loadedBy([command], env);
    expect(loaded.packages).toEqual(expect.arrayContaining(['better-sqlite3']));
    expect({ command, heavy: loaded.packages.filter((name) => ['liquidjs', 'sanitize-html'].includes(name)) }).toEqual({ command, heavy: [] });
  }
});

it('poll --once and digest --flush deliver to the console without loading the Slack client or nodemailer when neither is configured', async () => {
  const scene = await startSandboxWithRules({ rules: CONSOLE_RULES, sandbox: { events: 30 } });
  try {
    const [ticker] = scene.sandbox.world.eventTickers();
    scene.sandbox.world.updateEvent(ticker!, { edge_pp: 1 });
    expect((await runCli(['poll', '--once'], scene.env)).code).toBe(0); // the baseline
    scene.sandbox.world.updateEvent(ticker!, { edge_pp: 14 });
    const record = path.join(dir, 'imports-poll.txt');
    const polled = await runCli(['poll', '--once'], { ...scene.env, RECORD_IMPORTS_TO: record }, { nodeOptions: ['--import', RECORDER] });
    expect(polled.stdout).toMatch(new RegExp(`edge-over-10 ${ticker}`)); // delivered
    expect(polled.code).toBe(0);
    const poll = loadedFrom(record);
    expect(poll.packages).toEqual(expect.arrayContaining(['liquidjs', 'undici']));
    expect(poll.packages.filter((name) => CHANNEL_CLIENTS.includes(name))).toEqual([]);

    const digest = await loadedBy(['digest', '--flush'], scene.env, /.*/);
    expect(digest.packages.filter((name) => CHANNEL_CLIENTS.includes(name))).toEqual([]);
  } finally {
    await scene.close();
  }
});

it('run delivers to the console without loading the Slack client or nodemailer when neither is configured', async () => {
  const scene = await startSandboxWithRules({ rules: CONSOLE_RULES, sandbox: { events: 30 } });
  const record = path.join(dir, 'imports-run.txt');
  const [ticker] = scene.sandbox.world.eventTickers();
  scene.sandbox.world.updateEvent(ticker!, { edge_pp: 1 });
  const daemon = await startDaemonChild(
    { ...scene.env, EDGEWATCH_PORT: '0', EDGEWATCH_POLL_EVENTS: '1s', RECORD_IMPORTS_TO: record },
    { nodeOptions: ['--import', RECORDER] },
  );
  try {
    await eventsBaselineDone(daemon.url);
    scene.sandbox.world.updateEvent(ticker!, { edge_pp: 14 });
    await waitFor('the console alert', () => daemon.stdout().some((line) => line.includes(`edge-over-10 ${ticker}`)));
    expect((await daemon.signal('SIGTERM')).code).toBe(0);
    const loaded = loadedFrom(record);
    expect(loaded.packages).toEqual(expect.arrayContaining(['liquidjs', 'prom-client']));
    expect(loaded.packages.filter((name) => CHANNEL_CLIENTS.includes(name))).toEqual([]);
  } finally {
    await daemon.kill();
    await scene.close();
  }
});
