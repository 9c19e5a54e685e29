// Runs the real command line (`node bin/edgewatch.js ...`) in a child process.
import { spawn } from 'node:child_process';
import path from 'node:path';

export const BIN = path.resolve(import.meta.dirname, '../../bin/edgewatch.js');

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
  /** The working folder; this repository by default. */
  cwd?: string;
  /** Options for node itself, before the script (`--import ...`). */
  nodeOptions?: string[];
}

/** Runs one command with exactly the given environment (plus PATH), and waits for it to exit. */
export function runCli(args: string[], env: Record<string, string>, options: RunCliOptions = {}): Promise<CliResult> {
  const { timeoutMs = 60_000, uid, gid, bin = BIN, cwd = path.resolve(import.meta.dirname, '../..'), nodeOptions = [] } = options;
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
