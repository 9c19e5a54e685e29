import { afterEach, describe, expect, it } from 'vitest';
import { createWebhookNotifier } from '../../src/notify/index.ts';
import { webhookBody } from '../../src/render/index.ts';
import { answer, startWebhookReceiver, verifyWebhook, type WebhookReceiver, type WebhookReply, type WebhookRequest } from '../helpers/receivers.ts';
import { crossesAlert } from '../unit/render-fixtures.ts';

const SECRET = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;

let server: WebhookReceiver | undefined;

/** A webhook receiver answering with `reply`, at a url with a query string. */
async function receiver(reply: WebhookReply): Promise<{ url: string; received: WebhookRequest[] }> {
  server = await startWebhookReceiver(reply);
  return { url: `${server.url}?team=1`, received: server.requests };
}

afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('webhook notifier', () => {
  it('posts the raw body with Standard Webhooks headers that a receiver verifies', async () => {
    const { url, received } = await receiver(answer(204));
    const body = webhookBody(crossesAlert);
    const notifier = createWebhookNotifier();
    const outcome = await notifier.send({
      url,
      id: crossesAlert.id,
      body,
      secret: SECRET,
      headers: { 'X-Team': 'research', 'Content-Type': 'text/plain', 'webhook-id': 'forged' },
    });
    expect(outcome).toEqual({ ok: true });
    const [request] = received;
    expect(request?.method).toBe('POST');
    expect(request?.body).toBe(body);
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers['webhook-id']).toBe(crossesAlert.id);
    expect(request?.headers['x-team']).toBe('research');
    const timestamp = Number(request?.headers['webhook-timestamp']);
    expect(Math.abs(timestamp - Date.now() / 1000)).toBeLessThan(10);
    expect(request?.headers['webhook-signature']).toMatch(/^v1,/);
    const verified = verifyWebhook(request!, SECRET);
    expect(verified).toMatchObject({ version: 1, type: 'alert', id: crossesAlert.id });
  });

  it('sends no signature without a secret, and the same body and id on every attempt with a fresh timestamp', async () => {
    const { url, received } = await receiver(answer(200));
    const body = webhookBody(crossesAlert);
    const first = Date.parse('2026-11-21T18:00:03Z');
    let clock = first;
    const notifier = createWebhookNotifier({ now: () => new Date(clock) });
    await notifier.send({ url, id: crossesAlert.id, body });
    clock += 60_000;
    await notifier.send({ url, id: crossesAlert.id, body });
    expect(received.map((r) => r.body)).toEqual([body, body]);
    expect(received.map((r) => r.headers['webhook-id'])).toEqual([crossesAlert.id, crossesAlert.id]);
    expect(received.map((r) => r.headers['webhook-timestamp'])).toEqual([String(first / 1000), String(first / 1000 + 60)]);
    expect(received[0]?.headers['webhook-signature']).toBeUndefined();
  });

  it('a 500 is retryable', async () => {
    const { url } = await receiver(answer(500));
    const outcome = await createWebhookNotifier().send({ url, id: 'a', body: '{}' });
    expect(outcome).toEqual({ ok: false, retryable: true, error: 'webhook: HTTP 500' });
  });

  it('a 429 is retryable after its Retry-After', async () => {
    const { url } = await receiver(answer(429, { 'Retry-After': '30' }));
    const outcome = await createWebhookNotifier().send({ url, id: 'a', body: '{}' });
    expect(outcome).toEqual({ ok: false, retryable: true, error: 'webhook: HTTP 429', retryAfterMs: 30_000 });
  });

  it('a 400 is not retryable', async () => {
    const { url } = await receiver(answer(400));
    const outcome = await createWebhookNotifier().send({ url, id: 'a', body: '{}', secret: SECRET });
    expect(outcome).toEqual({ ok: false, retryable: false, error: 'webhook: HTTP 400' });
  });

  it('a receiver slower than the timeout is a retryable timeout', async () => {
    const { url } = await receiver((_request, res) => void setTimeout(() => res.writeHead(200).end(), 2_000));
    const started = Date.now();
    const outcome = await createWebhookNotifier({ timeoutMs: 200 }).send({ url, id: 'a', body: '{}' });
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(outcome).toEqual({ ok: false, retryable: true, error: 'webhook: timeout after 200 ms' });
  });

  it('a refused connection is retryable and names no secret', async () => {
    const { url } = await receiver(answer(200));
    await server?.close();
    server = undefined;
    const outcome = await createWebhookNotifier().send({ url, id: 'a', body: '{}', secret: SECRET });
    expect(outcome).toMatchObject({ ok: false, retryable: true });
    expect(JSON.stringify(outcome)).not.toContain(SECRET.slice(6));
  });

  it('a header Node refuses to send is a permanent failure naming the header, not its value, and nothing is sent', async () => {
    const { url, received } = await receiver(answer(200));
    const notifier = createWebhookNotifier();
    const newline = await notifier.send({ url, id: 'a', body: '{}', headers: { 'X-Token': 'tok-secret-value\r\nX-Injected: 1' } });
    expect(newline).toEqual({ ok: false, retryable: false, error: 'webhook: cannot send: invalid x-token header' });
    const snowman = await notifier.send({ url, id: 'a', body: '{}', headers: { 'X-Team': 'research ☃' } });
    expect(snowman).toEqual({ ok: false, retryable: false, error: 'webhook: cannot send: invalid x-team header' });
    const name = await notifier.send({ url, id: 'a', body: '{}', headers: { 'X Team': 'research' } });
    expect(name).toEqual({ ok: false, retryable: false, error: 'webhook: cannot send: invalid header key' });
    expect(received).toEqual([]);
  });

  it('a malformed secret is a permanent failure that does not echo it', async () => {
    const outcome = await createWebhookNotifier().send({ url: 'http://127.0.0.1:9/', id: 'a', body: '{}', secret: 'whsec_not base64!!' });
    expect(outcome).toMatchObject({ ok: false, retryable: false });
    expect(JSON.stringify(outcome)).not.toContain('not base64');
  });
});
