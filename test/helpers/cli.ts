// Runs the real command line (`node bin/edgewatch.js ...`) in a child process, and sets up what it
// runs against: a sandbox, a temporary folder with the database and the rules, and the environment.
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/index.ts';
import { tempDir, writeRules } from './files.ts';

export const REPO = path.resolve(import.meta.dirname, '../..');
export const BIN = path.join(REPO, 'bin/edgewatch.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunCliOptions {
  timeoutMs?: number;
  /** Run as this user and group (the test must run as root to switch). */
  uid?: number;
  gid?: number;
  /** Another installed copy's `bin/edgewatch.js` instead of this repository's. */
  bin?: string;
  /** The working folder; the repository by default. */
  cwd?: string;
  /** Options for node itself, before the script (`--import ...`). */
  nodeOptions?: string[];
}

/** Runs one command with exactly the given environment (plus PATH), and waits for it to exit. */
export function runCli(args: string[], env: Record<string, string>, options: RunCliOptions = {}): Promise<CliResult> {
  const { timeoutMs = 60_000, uid, gid, bin = BIN, cwd = REPO, nodeOptions = [] } = options;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeOptions, bin, ...args], {
      uid,
      gid,
      env: { PATH: process.env.PATH ?? '', ...env },
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export interface SandboxWithRules {
  sandbox: Sandbox;
  /** A temporary folder holding `rules/` and the database; close() removes it. */
  dir: string;
  rulesDir: string;
  /** `edgewatch.db` in `dir`. */
  dbPath: string;
  /** EDGEWATCH_API_URL, _API_KEY (the sandbox's, or any), _DB and _RULES. */
  env: Record<string, string>;
  close(): Promise<void>;
}

/** A sandbox on port 0 and a temporary folder with `rules/rules.yaml` (when `rules` is given), for a command or a daemon. */
export async function startSandboxWithRules(options: { rules?: string; sandbox?: SandboxOptions; dirPrefix?: string } = {}): Promise<SandboxWithRules> {
  const sandbox = await startSandbox({ port: 0, ...options.sandbox });
  const dir = tempDir(options.dirPrefix);
  const rulesDir = writeRules(dir, options.rules);
  const dbPath = path.join(dir, 'edgewatch.db');
  return {
    sandbox,
    dir,
    rulesDir,
    dbPath,
    env: { EDGEWATCH_API_URL: sandbox.url, EDGEWATCH_API_KEY: options.sandbox?.apiKey ?? 'test-key', EDGEWATCH_DB: dbPath, EDGEWATCH_RULES: rulesDir },
    close: async () => {
      await sandbox.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
