import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createSlackNotifier } from '../../src/notify/index.ts';
import { renderSlackMessage, type TemplateSet } from '../../src/render/index.ts';
import { evilAlert } from '../unit/render-fixtures.ts';
import { loadTemplates } from '../../src/render/index.ts';
import { fileURLToPath } from 'node:url';

const TOKEN = 'xoxb-1234-5678-secretsecret';
const set: TemplateSet = await loadTemplates(fileURLToPath(new URL('../../templates', import.meta.url)));

interface Call {
  path: string;
  authorization: string | undefined;
  form: URLSearchParams;
}

let server: Server | undefined;

/** A stand-in for Slack's Web API at http://127.0.0.1:<port>/api/. */
async function slackApi(reply: (call: Call, res: ServerResponse) => void): Promise<{ apiUrl: string; calls: Call[] }> {
  const calls: Call[] = [];
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const call = { path: req.url ?? '', authorization: req.headers.authorization, form: new URLSearchParams(Buffer.concat(chunks).toString('utf8')) };
      calls.push(call);
      reply(call, res);
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { apiUrl: `http://127.0.0.1:${port}/api/`, calls };
}

afterEach(async () => {
  const s = server;
  server = undefined;
  if (s !== undefined) {
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
});

const json = (res: ServerResponse, body: unknown, status = 200, headers: Record<string, string> = {}) =>
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));

describe('slack notifier', () => {
  it('calls chat.postMessage with channel, text and blocks', async () => {
    const { apiUrl, calls } = await slackApi((_, res) => json(res, { ok: true, channel: 'C1', ts: '1.2' }));
    const message = renderSlackMessage(set, evilAlert);
    const outcome = await createSlackNotifier({ token: TOKEN, apiUrl }).send({ channel: '#pm-alerts', ...message });
    expect(outcome).toEqual({ ok: true });
    expect(calls).toHaveLength(1);
    const [call] = calls;
    expect(call?.path).toBe('/api/chat.postMessage');
    expect(call?.authorization).toBe(`Bearer ${TOKEN}`);
    expect(call?.form.get('channel')).toBe('#pm-alerts');
    expect(call?.form.get('text')).toBe(message.text);
    expect(JSON.parse(call?.form.get('blocks') ?? 'null')).toEqual(message.blocks);
    // What Slack receives cannot ping the channel.
    expect(`${call?.form.get('text')}${call?.form.get('blocks')}`).not.toContain('<!channel>');
  });

  it('a 429 with Retry-After is retryable after that delay, attempted once', async () => {
    const { apiUrl, calls } = await slackApi((_, res) => json(res, { ok: false, error: 'ratelimited' }, 429, { 'Retry-After': '7' }));
    const outcome = await createSlackNotifier({ token: TOKEN, apiUrl }).send({ channel: 'C1', text: 't', blocks: [] });
    expect(outcome).toMatchObject({ ok: false, retryable: true, retryAfterMs: 7_000 });
    expect(calls).toHaveLength(1);
  });

  it.each([
    ['channel_not_found', false],
    ['invalid_auth', false],
    ['not_in_channel', false],
    ['internal_error', true],
  ])('ok: false with %s is retryable: %s', async (error, retryable) => {
    const { apiUrl } = await slackApi((_, res) => json(res, { ok: false, error }));
    const outcome = await createSlackNotifier({ token: TOKEN, apiUrl }).send({ channel: 'C1', text: 't', blocks: [] });
    expect(outcome).toEqual({ ok: false, retryable, error: `slack: ${error}` });
  });

  it('a 5xx is retryable, attempted once, and the token is not in the error', async () => {
    const { apiUrl, calls } = await slackApi((_, res) => res.writeHead(503).end(`upstream down ${TOKEN}`));
    const outcome = await createSlackNotifier({ token: TOKEN, apiUrl }).send({ channel: 'C1', text: 't', blocks: [] });
    expect(outcome).toMatchObject({ ok: false, retryable: true, error: 'slack: HTTP 503' });
    expect(calls).toHaveLength(1);
    expect(JSON.stringify(outcome)).not.toContain('secretsecret');
  });

  it('a refused connection is retryable without the token', async () => {
    const { apiUrl } = await slackApi((_, res) => json(res, { ok: true }));
    const s = server;
    server = undefined;
    await new Promise<void>((resolve) => s?.close(() => resolve()));
    const outcome = await createSlackNotifier({ token: TOKEN, apiUrl }).send({ channel: 'C1', text: 't', blocks: [] });
    expect(outcome).toMatchObject({ ok: false, retryable: true });
    expect(JSON.stringify(outcome)).not.toContain('secretsecret');
  });
});
