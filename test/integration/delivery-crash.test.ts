// A `poll --once` process is killed (SIGKILL) while a webhook request is in flight; the next
// `poll --once` delivers that alert with the same webhook-id and sends no other alert twice.
import { spawn, type ChildProcess } from 'node:child_process';
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.ts';
import { BIN, REPO, runCli, startSandboxWithRules, type SandboxWithRules } from '../helpers/cli.ts';
import { deliveryRows, type DeliveryRow } from '../helpers/delivery.ts';
import { TEMPLATES_DIR } from '../helpers/pipeline.ts';
import { answer, startWebhookReceiver, verifyWebhook, type WebhookReceiver } from '../helpers/receivers.ts';
import { waitFor } from '../helpers/wait.ts';
import { openSql } from '../helpers/sql.ts';

const KEY = 'crash-test-key';
const SECRET = `whsec_${Buffer.from('crash-test-secret-0123456789abcd').toString('base64')}`;

let scene: SandboxWithRules | undefined;
let receiver: WebhookReceiver | undefined;
let child: ChildProcess | undefined;
const held: ServerResponse[] = [];

afterEach(async () => {
  if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  child = undefined;
  for (const res of held.splice(0)) res.destroy();
  await receiver?.close();
  await scene?.close();
  receiver = undefined;
  scene = undefined;
});

async function rowsOf(db: string): Promise<DeliveryRow[]> {
  const store = await openStore(db);
  const sql = openSql(db);
  try {
    return deliveryRows(sql);
  } finally {
    sql.close();
    await store.close();
  }
}

describe('crash during delivery', () => {
  it('a poll killed with a webhook request in flight resends that alert, same webhook-id, and nothing else twice', { timeout: 120_000 }, async () => {
    const r = (receiver = await startWebhookReceiver());
    scene = await startSandboxWithRules({
      sandbox: { apiKey: KEY, events: 40, kpis: 5 },
      rules: `
channels:
  hook:
    type: webhook
    url: ${r.url}
    secret: ${SECRET}
rules:
  - name: new-events
    source: events
    trigger: { type: new }
    notify: [hook]
`,
    });
    const s = scene.sandbox;
    const db = scene.dbPath;
    const env = { ...scene.env, EDGEWATCH_TEMPLATES: TEMPLATES_DIR };

    const baseline = await runCli(['poll', '--once'], env);
    expect(baseline.stderr).toBe('edgewatch poll: first poll of events, kpis: a baseline, which stores what it sees and fires nothing (the next poll fires on what changed since)\n');
    expect(baseline.code).toBe(0);
    expect(r.requests).toHaveLength(0);

    // Five new events: five alerts. The receiver holds the first request open and answers the rest.
    for (let i = 0; i < 5; i++) s.world.addEvent();
    r.reply = (request, res) => {
      if (r.requests.length === 1) held.push(res);
      else answer(200)(request, res);
    };
    const proc = (child = spawn(process.execPath, [BIN, 'poll', '--once'], {
      env: { PATH: process.env.PATH ?? '', ...env },
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'pipe'],
    }));
    let output = '';
    proc.stdout?.on('data', (c: Buffer) => (output += c.toString()));
    proc.stderr?.on('data', (c: Buffer) => (output += c.toString()));
    const exited = new Promise<NodeJS.Signals | null>((resolve) => proc.on('exit', (_code, signal) => resolve(signal)));

    await waitFor('five webhook requests, one held', () => r.requests.length === 5 && held.length === 1, 60_000);
    // The four answered deliveries are recorded before the kill: only the held one is in doubt.
    const victim = r.requests[0]!.headers['webhook-id'] as string;
    let rows: DeliveryRow[] = [];
    const recorded = async (): Promise<boolean> => {
      rows = await rowsOf(db);
      return rows.filter((row) => row.status === 'delivered').length === 4;
    };
    await waitFor(`four recorded deliveries (child output: ${output})`, recorded, 10_000);
    proc.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    held.splice(0).forEach((res) => res.destroy());

    rows = await rowsOf(db);
    expect(rows).toHaveLength(5);
    // The attempt was counted before the send; the outcome never came: still pending.
    expect(rows.find((row) => row.alert_id === victim)).toMatchObject({ status: 'pending', attempts: 1 });
    expect(rows.filter((row) => row.alert_id !== victim).every((row) => row.status === 'delivered' && row.attempts === 1)).toBe(true);

    // Restart: the in-doubt alert goes again, with the same id and body, freshly signed.
    r.reply = answer(200);
    const restart = await runCli(['poll', '--once'], env);
    expect(restart.stderr).toBe('');
    expect(restart.code).toBe(0);
    expect(r.requests).toHaveLength(6);
    const resent = r.requests[5]!;
    expect(resent.headers['webhook-id']).toBe(victim);
    expect(resent.body).toBe(r.requests[0]!.body);
    expect(verifyWebhook(resent, SECRET)).toMatchObject({ id: victim });

    // Every alert reached the receiver, only the in-doubt one twice.
    const counts = new Map<string, number>();
    for (const request of r.requests) counts.set(request.headers['webhook-id'] as string, (counts.get(request.headers['webhook-id'] as string) ?? 0) + 1);
    expect(counts.size).toBe(5);
    expect([...counts].filter(([id, n]) => n !== (id === victim ? 2 : 1))).toEqual([]);
    rows = await rowsOf(db);
    expect(rows.map((row) => [row.status, row.attempts])).toEqual(
      rows.map((row) => ['delivered', row.alert_id === victim ? 2 : 1]),
    );
  });
});
