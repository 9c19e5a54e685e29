// Each command loads what it uses, so that scripts calling `validate`, `alerts` or `--version` start
// quickly: the Slack client, nodemailer, the sandbox, prom-client, the HTTP server (and, outside
// `validate`, LiquidJS) are loaded only by the commands that use them.
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/files.ts';

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

/** Runs one command, and says what it loaded: the files of dist/ it read hold what the build's metafile says. */
async function loadedBy(args: string[], env: Record<string, string>): Promise<Loaded> {
  const record = path.join(dir, `imports-${args.join('-')}.txt`);
  const result = await runCli(args, { ...env, RECORD_IMPORTS_TO: record }, { nodeOptions: ['--import', RECORDER] });
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
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
