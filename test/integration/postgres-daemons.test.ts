// `edgewatch run` processes sharing one PostgreSQL database (a real server: postgres.ts): each
// source is polled by one of them at a time and taken over when its leader dies; a database lost
// while running is waited for, not crashed on; its password never shows.
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SOURCES } from '../../src/core/types.ts';
import { runCli, startSandboxWithRules, type SandboxWithRules } from '../helpers/cli.ts';
import { getJson, getText, metricValue, startDaemonChild, type DaemonChild } from '../helpers/daemon.ts';
import { startPostgres, type PostgresServer } from '../helpers/postgres.ts';
import { startTcpProxy } from '../helpers/tcp-proxy.ts';
import { waitFor } from '../helpers/wait.ts';

const RULES = `
channels:
  screen: { type: console }
rules:
  - name: new-events
    source: events
    trigger: { type: new }
    notify: [screen]
`;
const INTERVAL_MS = 2_000;

let server: PostgresServer;
let cleanup: Array<() => Promise<void> | void> = [];

beforeAll(async () => {
  server = await startPostgres();
}, 120_000);
afterAll(async () => {
  await server?.stop();
}, 60_000);
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

async function scene(): Promise<SandboxWithRules> {
  const started = await startSandboxWithRules({ sandbox: { seed: 3, events: 120, kpis: 20 }, rules: RULES, dirPrefix: 'edgewatch-pg-daemons-' });
  cleanup.push(() => started.close());
  // Slow list pages: two processes polling one list at once would be seen overlapping.
  started.sandbox.inject({ path: '/v1/predictions/events', delayMs: 150, count: 1_000_000 });
  return started;
}

function envOf(world: SandboxWithRules, database: string, key: string): Record<string, string> {
  return {
    ...world.env,
    EDGEWATCH_DB: database,
    EDGEWATCH_API_KEY: key,
    EDGEWATCH_PORT: '0',
    EDGEWATCH_POLL_EVENTS: `${INTERVAL_MS / 1000}s`,
    EDGEWATCH_POLL_KPIS: `${INTERVAL_MS / 1000}s`,
    EDGEWATCH_POLL_REPORTS: '1h',
    EDGEWATCH_POLL_RUNS: '1h',
    EDGEWATCH_POLL_MARKETS: '1h',
  };
}

async function daemon(env: Record<string, string>): Promise<DaemonChild> {
  const child = await startDaemonChild(env);
  cleanup.push(() => child.kill());
  return child;
}

const leads = async (child: DaemonChild): Promise<string[]> => (await getJson(`${child.url}healthz`)).body.leads as string[];
/** Whether `child` leads every one of `sources`. */
const leadsAll = async (child: DaemonChild, sources: readonly string[]): Promise<boolean> => {
  const led = await leads(child);
  return sources.every((source) => led.includes(source));
};
/** The sources polled every interval here: taken over within the test (reports and runs are an hour away). */
const FREQUENT = ['events', 'kpis'];

describe('processes sharing a PostgreSQL database', () => {
  it('polls each source from one process at a time; when its leader is killed, the other polls it within one interval', async () => {
    const world = await scene();
    const database = await server.createDatabase();
    const a = await daemon(envOf(world, database, 'proc-a'));
    const b = await daemon(envOf(world, database, 'proc-b'));
    const byKey = new Map([
      ['proc-a', a],
      ['proc-b', b],
    ]);

    // Between them they lead every source, each once; both serve HTTP and name the database.
    await waitFor('every source led once', async () => {
      const all = [...(await leads(a)), ...(await leads(b))];
      return all.length === SOURCES.length && new Set(all).size === SOURCES.length;
    });
    for (const child of [a, b]) {
      const health = await getJson(`${child.url}healthz`);
      expect(health.status).toBe(200);
      expect(health.body.database).toEqual({ kind: 'postgres', ok: true, error: null });
    }
    // A few intervals of polls: never two processes on one list at once.
    await waitFor('events polled 4 times', () => world.sandbox.requests.filter((r) => r.path === '/v1/predictions/events').length >= 4, 20_000);
    expect(world.sandbox.concurrentPollers('/v1/predictions/events')).toBe(1);
    expect(world.sandbox.concurrentPollers('/v1/predictions/kpi-events')).toBe(1);
    const eventsKeys = new Set(world.sandbox.requests.filter((r) => r.path === '/v1/predictions/events').map((r) => r.key));
    expect(eventsKeys.size).toBe(1);
    const leaderKey = [...eventsKeys][0]!;
    const leader = byKey.get(leaderKey)!;
    const other = leader === a ? b : a;
    expect(await leads(leader)).toContain('events');
    const metrics = (await getText(`${leader.url}metrics`)).text;
    expect(metricValue(metrics, 'edgewatch_source_role{source="events",role="leader"}')).toBe(1);
    expect(metricValue((await getText(`${other.url}metrics`)).text, 'edgewatch_source_role{source="events",role="standby"}')).toBe(1);

    const killedAt = Date.now();
    await leader.kill();
    const takeover = await waitFor(
      'the other process polling events',
      () => world.sandbox.requests.find((r) => r.path === '/v1/predictions/events' && r.key !== leaderKey && r.at! > killedAt),
      15_000,
    );
    // Within one interval of the kill (and a second for a loaded machine).
    expect(takeover.at! - killedAt).toBeLessThanOrEqual(INTERVAL_MS + 1_000);
    // Its other sources too, each at its own next interval.
    await waitFor('the other process leading events and kpis', () => leadsAll(other, FREQUENT));

    // The killed process comes back as a standby: the survivor keeps the sources.
    const back = await daemon(envOf(world, database, leaderKey));
    const restartedAt = Date.now();
    await waitFor('two more polls of events', () => world.sandbox.requests.filter((r) => r.path === '/v1/predictions/events' && r.at! > restartedAt).length >= 2, 20_000);
    // (reports and runs, which nobody led since the kill, it may take: their interval is an hour.)
    expect((await leads(back)).filter((source) => FREQUENT.includes(source))).toEqual([]);
    expect((await getJson(`${back.url}healthz`)).status).toBe(200);
    expect(world.sandbox.requests.filter((r) => r.path === '/v1/predictions/events' && r.at! > restartedAt).every((r) => r.key !== leaderKey)).toBe(true);
    expect(world.sandbox.concurrentPollers('/v1/predictions/events')).toBe(1);
  });

  it('waits out a lost database: 503 and its sources given up to a process that still reaches it, then resumes', async () => {
    const world = await scene();
    const database = await server.createDatabase();
    const proxy = await startTcpProxy({ host: server.host, port: server.port });
    cleanup.push(() => proxy.close());
    const name = new URL(database).pathname.slice(1);
    const a = await daemon({ ...envOf(world, server.urlOf(name, { port: proxy.port }), 'proc-a'), EDGEWATCH_LOG_LEVEL: 'debug' });
    await waitFor('a leading every source', async () => (await leads(a)).length === SOURCES.length);
    const b = await daemon(envOf(world, database, 'proc-b'));

    await proxy.cut();
    const lost = await waitFor('a unhealthy', async () => {
      const health = await getJson(`${a.url}healthz`);
      return health.status === 503 && health.body.database.ok === false ? health : undefined;
    });
    expect(lost.body.leads).toEqual([]);
    expect(lost.body.reasons.join(' ')).toMatch(new RegExp(`database unreachable: .*127\\.0\\.0\\.1:${proxy.port}`));
    await waitFor('b taking over events and kpis', () => leadsAll(b, FREQUENT), 15_000);
    // No crash loop: a keeps serving, and keeps checking with backoff.
    await a.waitForLog('a second failed check', (line) => line.msg === 'database still unreachable', 15_000);
    expect(a.process.exitCode).toBeNull();

    await proxy.restore();
    const back = await waitFor('a healthy again', async () => {
      const health = await getJson(`${a.url}healthz`);
      return health.status === 200 ? health : undefined;
    }, 45_000);
    expect(back.body.database).toEqual({ kind: 'postgres', ok: true, error: null });
    await a.waitForLog('resuming', (line) => line.msg.startsWith('the database answers again'));
    // b kept the sources; a polls again when b goes.
    await b.kill();
    await waitFor('a leading events and kpis again', () => leadsAll(a, FREQUENT), 15_000);
  });

  it('never shows the password of EDGEWATCH_DB: not in the log, /healthz, the status page, metrics or errors', async () => {
    const world = await scene();
    const database = await server.createDatabase();
    const name = new URL(database).pathname.slice(1);
    const password = 'pw-Sekrit-77';
    const admin = server.urlOf('postgres');
    const client = new pg.Client({ connectionString: admin });
    await client.connect();
    await client.query(`DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'ew') THEN CREATE ROLE ew LOGIN PASSWORD '${password}'; END IF; END $$`);
    await client.query(`ALTER DATABASE ${name} OWNER TO ew`);
    await client.end();
    const url = new URL(database);
    url.username = 'ew';
    url.password = password;

    const child = await daemon({ ...envOf(world, url.toString(), 'proc-a'), EDGEWATCH_LOG_LEVEL: 'debug' });
    await waitFor('every source led', async () => (await leads(child)).length === SOURCES.length);
    const shown = [
      JSON.stringify(child.logs()),
      child.stderr(),
      child.stdout().join('\n'),
      (await getText(`${child.url}healthz`)).text,
      (await getText(child.url)).text,
      (await getText(`${child.url}metrics`)).text,
    ].join('\n');
    expect(shown).toContain(`postgres://ew@127.0.0.1:${server.port}/${name}`);
    expect(shown).not.toContain(password);

    // Commands that fail on the database name it by host and port.
    const wrong = new URL(url);
    wrong.port = String(server.port + 1);
    const failed = await runCli(['alerts'], { EDGEWATCH_DB: wrong.toString() });
    expect(failed.code).toBe(1);
    expect(failed.stderr.trim().split('\n')).toHaveLength(1);
    expect(failed.stderr).toMatch(new RegExp(`^edgewatch: cannot reach PostgreSQL at 127\\.0\\.0\\.1:${server.port + 1} \\(database ${name}\\): `));
    expect(failed.stderr + failed.stdout).not.toContain(password);
  });

  it('exits 1 at start, with one line naming host and port, when PostgreSQL cannot be reached', async () => {
    const world = await scene();
    const unreachable = server.urlOf('edgewatch', { password: 'pw-Sekrit-77', port: 1 });
    const result = await runCli(['run'], { ...envOf(world, unreachable, 'proc-a'), EDGEWATCH_RULES: world.rulesDir }, { timeoutMs: 30_000 });
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^edgewatch: cannot reach PostgreSQL at 127\.0\.0\.1:1 \(database edgewatch\): .*ECONNREFUSED/);
    expect(result.stderr + result.stdout).not.toContain('Sekrit');
  });
});
