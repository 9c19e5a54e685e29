import { afterEach, describe, expect, it } from 'vitest';
import { createSlackNotifier } from '../../src/notify/index.ts';
import { renderSlackMessage, type TemplateSet } from '../../src/render/index.ts';
import { evilAlert } from '../unit/render-fixtures.ts';
import { loadTemplates } from '../../src/render/index.ts';
import { fileURLToPath } from 'node:url';
import { slackJson, startSlackApi, type SlackApi, type SlackReply } from '../helpers/receivers.ts';

const TOKEN = 'xoxb-1234-5678-secretsecret';
const set: TemplateSet = await loadTemplates(fileURLToPath(new URL('../../templates', import.meta.url)));

let server: SlackApi | undefined;

async function slackApi(reply: SlackReply): Promise<SlackApi> {
  server = await startSlackApi(reply);
  return server;
}

afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('slack notifier', () => {
  it('calls chat.postMessage with channel, text and blocks', async () => {
    const { apiUrl, calls } = await slackApi((_, res) => slackJson(res, { ok: true, channel: 'C1', ts: '1.2' }));
    const message = renderSlackMessage(set, evilAlert);
    const outcome = await createSlackNotifier({ token: TOKEN, apiUrl }).send({ channel: '#pm-alerts', ...message });
    // Where the message is, to update it and reply in its thread later.
    expect(outcome).toEqual({ ok: true, ref: { channel: 'C1', ts: '1.2' } });
    expect(calls).toHaveLength(1);
    const [call] = calls;
    expect(call?.path).toBe('/api/chat.postMessage');
    expect(call?.authorization).toBe(`Bearer ${TOKEN}`);
    expect(call?.channel).toBe('#pm-alerts');
    expect(call?.text).toBe(message.text);
    expect(call?.blocks).toEqual(message.blocks);
    // What Slack receives cannot ping the channel.
    expect(`${call?.text}${new URLSearchParams(call?.raw).get('blocks')}`).not.toContain('<!channel>');
  });

  it('a 429 with Retry-After is retryable after that delay, attempted once', async () => {
    const { apiUrl, calls } = await slackApi((_, res) => slackJson(res, { ok: false, error: 'ratelimited' }, 429, { 'Retry-After': '7' }));
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
    const { apiUrl } = await slackApi((_, res) => slackJson(res, { ok: false, error }));
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
    const { apiUrl } = await slackApi((_, res) => slackJson(res, { ok: true }));
    await server?.close();
    server = undefined;
    const outcome = await createSlackNotifier({ token: TOKEN, apiUrl }).send({ channel: 'C1', text: 't', blocks: [] });
    expect(outcome).toMatchObject({ ok: false, retryable: true });
    expect(JSON.stringify(outcome)).not.toContain('secretsecret');
  });
});
