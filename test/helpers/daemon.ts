// `edgewatch run` in a child process, and small helpers to read its HTTP endpoints.
import { spawn, type ChildProcess } from 'node:child_process';
import { BIN, REPO } from './cli.ts';
import type { Json } from './json.ts';
import { waitFor } from './wait.ts';

export interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

export interface DaemonChild {
  process: ChildProcess;
  /** The status page root, `http://127.0.0.1:<port>/`, parsed from the log. */
  url: string;
  stdout(): string[];
  logs(): LogLine[];
  /** Everything written to standard error, parsed or not (for failure messages). */
  stderr(): string;
  waitForLog(what: string, match: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  /** Sends a signal and resolves with the exit code and how long the exit took. */
  signal(signal: NodeJS.Signals): Promise<{ code: number | null; ms: number }>;
  /** Ends the child if it still runs (for afterEach). */
  kill(): Promise<void>;
}

/** Variables that a developer's shell or .env could set: unset them unless the test sets them. */
const OURS = /^(EDGEWATCH_|SLACK_|SMTP_URL$|EMAIL_FROM$)/;

export function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base = Object.fromEntries(Object.entries(process.env).map(([k, v]) => [k, OURS.test(k) ? '' : v]));
  // Empty counts as unset for edgewatch, and dotenv does not override a variable that is set.
  for (const name of ['EDGEWATCH_API_URL', 'EDGEWATCH_API_KEY', 'EDGEWATCH_RULES', 'EDGEWATCH_TEMPLATES', 'SLACK_BOT_TOKEN', 'SMTP_URL']) base[name] = '';
  return { ...base, EDGEWATCH_LOG_LEVEL: 'info', ...env };
}

export async function startDaemonChild(env: Record<string, string>, options: { cwd?: string; timeoutMs?: number } = {}): Promise<DaemonChild> {
  const child = spawn(process.execPath, [BIN, 'run'], { cwd: options.cwd ?? REPO, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  const out: string[] = [];
  const logs: LogLine[] = [];
  let err = '';
  let outRest = '';
  let errRest = '';
  child.stdout.on('data', (chunk: Buffer) => {
    const lines = (outRest + chunk.toString()).split('\n');
    outRest = lines.pop()!;
    out.push(...lines);
  });
  child.stderr.on('data', (chunk: Buffer) => {
    err += chunk.toString();
    const lines = (errRest + chunk.toString()).split('\n');
    errRest = lines.pop()!;
    for (const line of lines) {
      try {
        logs.push(JSON.parse(line) as LogLine);
      } catch {
        // not a log line (a crash message): kept in `err`
      }
    }
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let done = false;
  void exited.then(() => {
    done = true;
  });

  const waitForLog = (what: string, match: (line: LogLine) => boolean, timeoutMs = 15_000) =>
    waitFor(`log: ${what}\n--- stderr so far:\n${err.slice(-3000)}`, () => {
      if (done && !logs.some(match)) throw new Error(`daemon exited before logging ${what}:\n${err.slice(-3000)}`);
      return logs.find(match);
    }, timeoutMs);

  const daemon: DaemonChild = {
    process: child,
    url: '',
    stdout: () => out,
    logs: () => logs,
    stderr: () => err,
    waitForLog,
    async signal(signal) {
      const started = Date.now();
      child.kill(signal);
      const code = await exited;
      return { code, ms: Date.now() - started };
    },
    async kill() {
      if (done) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
  try {
    const listening = await waitForLog('listening', (line) => line.msg.startsWith('listening on '), options.timeoutMs ?? 20_000);
    daemon.url = String(listening.url);
  } catch (error) {
    await daemon.kill();
    throw error;
  }
  return daemon;
}

export async function getJson(url: string): Promise<{ status: number; body: Json }> {
  const response = await fetch(url);
  return { status: response.status, body: (await response.json()) as Json };
}

export async function getText(url: string): Promise<{ status: number; text: string }> {
  const response = await fetch(url);
  return { status: response.status, text: await response.text() };
}

/** Resolves once a daemon's first (baseline) poll of events has succeeded: what changes next fires. */
export async function eventsBaselineDone(url: string): Promise<void> {
  await waitFor('events baseline', async () => (await getJson(`${url}healthz`)).body.sources.events.last_success_at !== null);
}

/** The value of one Prometheus sample, e.g. metricValue(text, 'edgewatch_polls_total{source="events"}'). */
export function metricValue(text: string, sample: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${sample} `));
  return line === undefined ? undefined : Number(line.slice(sample.length + 1));
}
