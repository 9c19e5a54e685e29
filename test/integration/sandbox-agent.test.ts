// The sandbox's agent endpoint, POST {base_url}/responses (api/agent-conversations.md): a cited
// answer about the event a question names, whole and as the documented stream of events.
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import type { Json } from '../helpers/json.ts';

const started: Sandbox[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.close()));
});

async function sandbox(): Promise<Sandbox> {
  const s = await startSandbox({ seed: 6, apiKey: 'agent-key' });
  started.push(s);
  return s;
}

function ask(s: Sandbox, body: unknown, key: string | null = 'agent-key'): Promise<Response> {
  return fetch(`${s.url}/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key === null ? {} : { authorization: `Bearer ${key}` }) },
    body: JSON.stringify(body),
  });
}

/** Server-sent events as they arrive on the socket: `event:` name and parsed `data:`. */
async function readEvents(res: Response): Promise<Array<{ event: string; data: Json }>> {
  const events: Array<{ event: string; data: Json }> = [];
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      const block = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (event !== undefined && data !== undefined) events.push({ event, data: JSON.parse(data) as Json });
    }
  }
  expect(buffered).toBe('');
  return events;
}

async function latestRow(s: Sandbox, ticker: string): Promise<Json> {
  const res = await fetch(`${s.url}/predictions/events/${ticker}`, { headers: { authorization: 'Bearer agent-key' } });
  return (await res.json()) as Json;
}

describe('sandbox agent: POST /responses', () => {
  it('answers about the event the question names, with numbered markers and their citations', async () => {
    const s = await sandbox();
    const ticker = s.world.eventTickers()[0]!;
    const event = await latestRow(s, ticker);
    const res = await ask(s, { model: 'svc-agent', input: `Why might ${event.name} have moved?`, instructions: 'Be brief.' });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    expect(body).toMatchObject({ object: 'response', status: 'completed', model: 'svc-agent', id: expect.stringMatching(/^resp_/) });
    const content = body.output[0].content[0];
    expect(content.type).toBe('output_text');
    expect(content.text).toContain(event.name);
    expect(content.text).toContain(`${event.market_probability}%`);
    expect(content.text).toMatch(/\[1\].*\[2\]/);
    expect(content.annotations).toEqual([
      { order: 1, name: expect.stringContaining(event.name), url: expect.stringMatching(/^https:\/\//) },
      { order: 2, name: expect.stringContaining(event.name), url: `https://news.example.com/${event.slug}` },
    ]);
  });

  it('streams the documented events in order; the deltas make the text and the completed event carries the citations', async () => {
    const s = await sandbox();
    const ticker = s.world.eventTickers()[1]!;
    const res = await ask(s, { model: 'svc-sec-agent', input: `What do filings say about ${ticker}?`, stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const events = await readEvents(res);
    const types = events.map((e) => e.event);
    const distinct = types.filter((t, i) => t !== types[i - 1]);
    expect(distinct).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(types.filter((t) => t === 'response.output_text.delta').length).toBeGreaterThan(1);
    for (const [i, e] of events.entries()) expect(e.data).toMatchObject({ type: e.event, sequence_number: i });
    const text = events.filter((e) => e.event === 'response.output_text.delta').map((e) => e.data.delta).join('');
    expect(events.find((e) => e.event === 'response.output_text.done')!.data.text).toBe(text);
    const completed = events[events.length - 1]!.data.response;
    expect(completed.status).toBe('completed');
    expect(completed.output[0].content[0].text).toBe(text);
    expect(text).toMatch(/\[1\].*\[2\]/);
    expect(completed.citations).toEqual(completed.output[0].content[0].annotations);
    expect(completed.citations.map((c: Json) => c.order)).toEqual([1, 2]);
    expect(completed.citations[0].name).toMatch(/^Form 10-Q filing/);
  });

  it('answers a question about no known event with cited general notes', async () => {
    const s = await sandbox();
    const body = (await (await ask(s, { model: 'svc-agent', input: 'What is the weather on Mars?' })).json()) as Json;
    expect(body.output[0].content[0].text).toMatch(/\[1\].*\[2\]/);
    expect(body.output[0].content[0].annotations).toHaveLength(2);
  });

  it('refuses an unknown agent (404), a missing input (422) and a missing key (401), as {detail}', async () => {
    const s = await sandbox();
    const unknown = await ask(s, { model: 'gpt-x', input: 'hello' });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ detail: 'Unknown model gpt-x: use one of svc-agent, svc-sec-agent' });
    const missing = await ask(s, { model: 'svc-agent' });
    expect(missing.status).toBe(422);
    expect(((await missing.json()) as Json).detail).toMatch(/^input: /);
    const anonymous = await ask(s, { model: 'svc-agent', input: 'hello' }, null);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toEqual({ detail: 'Missing or invalid API key' });
  });
});
