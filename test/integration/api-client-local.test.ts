// The API client against small local HTTP servers on port 0: retries, timeouts, error
// envelopes, schema failures and key hygiene, each scripted exactly.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { rejection } from '../helpers/api-errors.ts';
import { startHttpServer } from '../helpers/receivers.ts';
import { waitFor } from '../helpers/wait.ts';
import { backoffDelay, createApiClient, parseRetryAfter, type ApiClient, type ApiClientOptions, type RequestInfo } from '../../src/api/index.ts';

const KEY = 'sk-test-SECRET-4242';
const MB = 1024 * 1024;

interface Received {
  method: string;
  url: string;
  authorization: string | undefined;
  body: string;
}

type Handler = (req: IncomingMessage, res: ServerResponse, n: number, body: string) => void;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function serve(handler: Handler): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = await startHttpServer((req, body, res) => {
    received.push({ method: req.method ?? '', url: req.url ?? '', authorization: req.headers.authorization, body });
    handler(req, res, received.length, body);
  });
  cleanups.push(server.close);
  return { url: `http://127.0.0.1:${server.port}/v1`, received };
}

function client(url: string, options: Partial<ApiClientOptions> = {}): ApiClient {
  const c = createApiClient({ baseUrl: url, apiKey: KEY, backoffBaseMs: 1, maxBackoffMs: 2000, ...options });
  cleanups.push(() => c.close());
  return c;
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function eventRow(ticker: string, patch: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    history_id: 1,
    run_id: '0b7c6a2e-1f3d-4c55-9a0e-6c1d2b3a4f50',
    captured_at: '2026-11-20T12:00:00Z',
    event_ticker: ticker,
    name: `Event ${ticker}`,
    slug: ticker.toLowerCase(),
    image_url: 'https://images.example.com/x.png',
    series_category: 'economics',
    available_on_brokers: true,
    mutually_exclusive: false,
    analysis_last_updated: '2026-11-20T12:00:00Z',
    confidence_score: 7.5,
    model_probability: 60,
    market_probability: 48,
    edge_pp: 12,
    expected_return: 0.25,
    r_score: 0.9,
    total_volume: 120000,
    total_open_interest: 40000,
    close_time: '2026-12-10T19:00:00Z',
    key_takeaway: 'Takeaway',
    current_state_summary_richtext: '<p>x</p>',
    short_answer_richtext: '<p>y</p>',
    executive_summary_richtext: '<p>z</p>',
    outcome_probabilities: null,
    has_history: true,
    eligible: true,
    eligibility_status: 'open',
    eligibility_reason: null,
    ...patch,
  };
}

const page = (data: unknown[], next: string | null) => ({ data, next_cursor: next, has_more: next !== null });

/** Every string reachable from an error: message, fields, and the whole cause chain. */
function allText(value: unknown, seen = new Set<unknown>()): string {
  if (typeof value === 'string') return value;
  if (typeof value !== 'object' || value === null || seen.has(value)) return '';
  seen.add(value);
  const parts: string[] = [];
  if (value instanceof Error) parts.push(value.message, value.stack ?? '', allText(value.cause, seen));
  for (const key of Object.getOwnPropertyNames(value)) parts.push(allText((value as Record<string, unknown>)[key], seen));
  return parts.join('\n');
}

async function collect<T>(pages: AsyncIterable<{ rows: T[] }>): Promise<T[]> {
  const rows: T[] = [];
  for await (const p of pages) rows.push(...p.rows);
  return rows;
}

describe('api client on a local server', () => {
  it('sends the Bearer key, include=eligibility and limit, and walks cursors', async () => {
    const { url, received } = await serve((req, res, n) => {
      if (n === 1) json(res, 200, page([eventRow('A-1'), eventRow('A-2')], 'c2'));
      else json(res, 200, page([eventRow('A-3')], null));
    });
    const rows = await collect(client(url).eventPages({ limit: 2 }));
    expect(rows.map((r) => r.event_ticker)).toEqual(['A-1', 'A-2', 'A-3']);
    expect(received).toHaveLength(2);
    expect(received[0]!.authorization).toBe(`Bearer ${KEY}`);
    const first = new URL(received[0]!.url, 'http://x');
    expect(first.pathname).toBe('/v1/predictions/events');
    expect(first.searchParams.get('include')).toBe('eligibility');
    expect(first.searchParams.get('limit')).toBe('2');
    expect(first.searchParams.has('cursor')).toBe(false);
    expect(new URL(received[1]!.url, 'http://x').searchParams.get('cursor')).toBe('c2');
  });

  it('stops requesting when the consumer breaks', async () => {
    const { url, received } = await serve((_req, res, n) => json(res, 200, page([eventRow(`B-${n}`)], `c${n}`)));
    for await (const p of client(url).eventPages()) {
      expect(p.rows[0]!.event_ticker).toBe('B-1');
      break;
    }
    expect(received).toHaveLength(1);
  });

  it('rejects a page that says has_more with a repeated cursor instead of looping', async () => {
    const { url } = await serve((_req, res) => json(res, 200, page([eventRow('C-1')], 'same')));
    const err = await rejection(collect(client(url).eventPages()));
    expect(err.code).toBe('invalid_response');
    expect(err.message).toContain('repeated');
  });

  it('ends a page chain that never ends at maxPages, naming the list and the cap', async () => {
    // Fresh rows and a fresh cursor on every page; the server gives up by itself after 500.
    const { url, received } = await serve((_req, res, n) => json(res, 200, page([eventRow(`E-${n}`)], n < 500 ? `c${n}` : null)));
    const seen: string[] = [];
    const walk = async () => {
      for await (const p of client(url, { maxPages: 20 }).eventPages()) seen.push(...p.rows.map((r) => r.event_ticker));
    };
    const err = await rejection(walk());
    expect(err).toMatchObject({ code: 'page_limit', retryable: false, resource: 'events list' });
    expect(err.message).toBe('events list: page_limit: 20 pages read and has_more is still true; EDGEWATCH_MAX_PAGES (20) caps the pages one poll reads from one list');
    expect(received).toHaveLength(20);
    expect(seen).toHaveLength(20);
  });

  it('ends a walk of a list that takes longer than maxListMs', async () => {
    const { url, received } = await serve((_req, res, n) => setTimeout(() => json(res, 200, page([eventRow(`S-${n}`)], n < 100 ? `c${n}` : null)), 40));
    const err = await rejection(collect(client(url, { maxListMs: 300 }).eventPages()));
    expect(err).toMatchObject({ code: 'time_limit', retryable: false, resource: 'events list' });
    expect(err.message).toMatch(/^events list: time_limit: still paging after 300ms \(\d+ pages\); one poll reads one list for at most 300ms$/);
    expect(received.length).toBeLessThan(50);
  });

  it('retries a 429 after its Retry-After seconds, then succeeds', async () => {
    const { url, received } = await serve((_req, res, n) => {
      if (n === 1) json(res, 429, { detail: 'slow down' }, { 'retry-after': '1' });
      else json(res, 200, { run_id: 'r1', status: 'processing', venue: 'venuea', event_ticker: 'X', requested_url: null });
    });
    const started = Date.now();
    const run = await client(url).runStatus('r1');
    expect(run.status).toBe('processing');
    expect(received).toHaveLength(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it.each([500, 502, 503, 504])('retries a %i, then succeeds', async (status) => {
    const { url, received } = await serve((_req, res, n) => {
      if (n === 1) json(res, status, { detail: 'transient' });
      else json(res, 200, { run_id: 'r1', status: 'completed', venue: 'venuea', event_ticker: null, requested_url: null });
    });
    expect((await client(url).runStatus('r1')).status).toBe('completed');
    expect(received).toHaveLength(2);
  });

  it('gives up after the configured number of retries', async () => {
    const { url, received } = await serve((_req, res) => json(res, 503, { detail: 'down' }));
    const err = await rejection(client(url, { retries: 2 }).runStatus('r1'));
    expect(received).toHaveLength(3);
    expect(err).toMatchObject({ code: 'http_503', status: 503, retryable: true, apiMessage: 'down', resource: 'run r1' });
  });

  it.each([400, 401, 403, 404, 409, 422])('does not retry a %i', async (status) => {
    const { url, received } = await serve((_req, res) => json(res, status, { detail: 'no' }));
    const err = await rejection(client(url).runStatus('r1'));
    expect(received).toHaveLength(1);
    expect(err).toMatchObject({ code: `http_${status}`, status, retryable: false });
  });

  it('parses the reports envelope {error:{code,message}}', async () => {
    const { url } = await serve((_req, res) =>
      json(res, 404, { error: { message: 'No report for KXFED-25DEC', type: 'invalid_request_error', param: null, code: 'report_not_found' } }),
    );
    const err = await rejection(client(url).trust('venuea', 'KXFED-25DEC'));
    expect(err).toMatchObject({ code: 'report_not_found', status: 404, apiMessage: 'No report for KXFED-25DEC', resource: 'trust venuea/KXFED-25DEC', retryable: false });
    expect(err.message).toBe('trust venuea/KXFED-25DEC: report_not_found (HTTP 404): No report for KXFED-25DEC');
  });

  it('parses the {detail} envelope', async () => {
    const { url } = await serve((_req, res) => json(res, 404, { detail: 'Event not found' }));
    const err = await rejection(client(url).kpi('nflx-subs-2026q4'));
    expect(err).toMatchObject({ code: 'http_404', status: 404, apiMessage: 'Event not found', resource: 'kpi nflx-subs-2026q4' });
  });

  it('does not retry generation on a 503 or a 429 insufficient_credits (credits must not be charged twice)', async () => {
    const { url, received } = await serve((_req, res, n) =>
      n === 1
        ? json(res, 503, { error: { message: 'unreachable', type: 'x', param: null, code: 'service_unavailable' } })
        : json(res, 429, { error: { message: 'need 3 credits', type: 'x', param: null, code: 'insufficient_credits' } }, { 'retry-after': '0' }),
    );
    const c = client(url);
    expect(await rejection(c.startGeneration('venuea', 'KXFED-25DEC'))).toMatchObject({ code: 'service_unavailable', retryable: false });
    expect(await rejection(c.startGeneration('venuea', 'KXFED-25DEC'))).toMatchObject({ code: 'insufficient_credits', status: 429, retryable: false });
    expect(received.map((r) => r.method)).toEqual(['POST', 'POST']);
  });

  it('does not retry generation on a timeout (the request reached the server)', async () => {
    const { url, received } = await serve((_req, res) => setTimeout(() => json(res, 202, {}), 400));
    const err = await rejection(client(url, { timeoutMs: 100 }).startGeneration('venuea', 'K'));
    expect(err.code).toBe('timeout');
    expect(received).toHaveLength(1);
  });

  it('times out a slow answer, retries, and reports the timeout', async () => {
    const { url, received } = await serve((_req, res) => setTimeout(() => json(res, 200, {}), 500));
    const started = Date.now();
    const err = await rejection(client(url, { timeoutMs: 100, retries: 1 }).runStatus('r1'));
    expect(err).toMatchObject({ code: 'timeout', status: undefined, retryable: true });
    expect(received).toHaveLength(2);
    expect(Date.now() - started).toBeLessThan(450);
  });

  it('reports a malformed body as invalid_response', async () => {
    const { url } = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"data": [');
    });
    const err = await rejection(collect(client(url).eventPages()));
    expect(err).toMatchObject({ code: 'invalid_response', status: 200, retryable: false, resource: 'events list' });
    expect(err.message).toContain('not JSON');
  });

  it('refuses a body whose Content-Length is over the cap, once, without retrying, naming the endpoint and the cap', async () => {
    const run = { run_id: 'r1', status: 'processing', venue: 'venuea', event_ticker: 'X', requested_url: null, padding: 'x'.repeat(3 * MB) };
    const size = Buffer.byteLength(JSON.stringify(run));
    const { url, received } = await serve((_req, res) => json(res, 200, run, { 'content-length': String(size) }));
    const err = await rejection(client(url, { maxResponseBytes: MB, retries: 4 }).runStatus('r1'));
    expect(err).toMatchObject({ code: 'response_too_large', status: 200, retryable: false, resource: 'run r1' });
    expect(err.message).toBe(`run r1: response_too_large (HTTP 200): GET /predictions/reports/status/r1 sent ${size} bytes, over the 1 MB limit (EDGEWATCH_MAX_RESPONSE_MB)`);
    expect(received).toHaveLength(1);
  });

  it('stops reading a body without Content-Length at the cap instead of buffering it whole', async () => {
    let written = 0;
    let closedEarly = false;
    const { url, received } = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const limit = 64 * MB;
      res.on('close', () => (closedEarly = written < limit));
      const pump = (): void => {
        while (written < limit && !res.destroyed) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
    const err = await rejection(collect(client(url, { maxResponseBytes: MB, retries: 2 }).eventPages()));
    expect(err).toMatchObject({ code: 'response_too_large', retryable: false, resource: 'events list' });
    expect(err.message).toContain('GET /predictions/events sent more than 1048576 bytes, over the 1 MB limit');
    expect(received).toHaveLength(1);
    await waitFor('the server to see the connection closed', () => closedEarly, 5_000);
    expect(written).toBeLessThan(16 * MB);
  });

  it('accepts and keeps fields it does not know, nested ones too', async () => {
    const research = { sources: [{ url: 'https://a.example.com', title: null, lanes: ['curated'], rank: 3 }], brand_new: { x: 1 } };
    const { url } = await serve((_req, res) => json(res, 200, { ...page([eventRow('D-1', { research, new_metric: 4.2 })], null), as_of_v2: 'x' }));
    const [row] = await collect(client(url).eventPages());
    expect(row!['new_metric']).toBe(4.2);
    expect(row!.research).toEqual(research);
  });

  it("checks a list row's research only as an object: its parts pass as they came, unchecked; research that is no object is refused", async () => {
    // The product stores research and hands it on in `current`, but reads none of it.
    const research = { catalysts: { observed: [{ date: 20261121, direction: null }] }, evidence: 'one slot', sources: [{ title: 3 }] };
    const { url } = await serve((req, res) =>
      json(res, 200, page([eventRow(req.url!.includes('cursor=') ? 'KXTEXT' : 'D-1', { research: req.url!.includes('cursor=') ? 'a summary' : research })], req.url!.includes('cursor=') ? null : 'next')),
    );
    const pages = client(url).eventPages()[Symbol.asyncIterator]();
    const first = await pages.next();
    expect(first.done).toBe(false);
    expect(first.value!.rows[0]!.research).toEqual(research);
    const err = await rejection(pages.next());
    expect(err).toMatchObject({ code: 'invalid_response', retryable: false, resource: 'events list' });
    expect(err.message).toBe('events list: row KXTEXT: field research: expected object, received string');
  });

  it('rejects a wrongly typed field, naming the resource, the row and the field', async () => {
    const { url } = await serve((_req, res) => json(res, 200, page([eventRow('KXFED-25NOV'), eventRow('KXFED-25DEC', { edge_pp: 'abc' })], null)));
    const err = await rejection(collect(client(url).eventPages()));
    expect(err.code).toBe('invalid_response');
    expect(err.retryable).toBe(false);
    expect(err.message).toBe('events list: row KXFED-25DEC: field edge_pp: expected number, received string');
  });

  it('refuses an object nested too deep (which would overflow the stack later), naming the list, the row and the field', async () => {
    const deep = (levels: number) => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);
    const rowText = (ticker: string, research: string) => JSON.stringify(eventRow(ticker, { research: null })).replace('"research":null', `"research":${research}`);
    const { url } = await serve((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      if (req.url!.includes('/status/')) res.end(`{"run_id":"r9","status":"completed","venue":"venuea","event_ticker":null,"requested_url":null,"extra":${deep(20_000)}}`);
      else res.end(`{"data":[${rowText('KXOK', deep(50))},${rowText('KXDEEP', deep(20_000))}],"next_cursor":null,"has_more":false}`);
    });
    const c = client(url);
    const err = await rejection(collect(c.eventPages()));
    expect(err).toMatchObject({ code: 'invalid_response', retryable: false, resource: 'events list' });
    expect(err.message).toBe('events list: row KXDEEP: field research: nested more than 100 levels deep');
    const single = await rejection(c.runStatus('r9'));
    expect(single.message).toBe('run r9: field extra: nested more than 100 levels deep');
  });

  it('names a nested field path and an object resource', async () => {
    const { url } = await serve((_req, res) =>
      json(res, 200, { run_id: 'r9', status: 'completed', venue: 'venuea', event_ticker: 7, requested_url: null }),
    );
    const err = await rejection(client(url).runStatus('r9'));
    expect(err.message).toBe('run r9: field event_ticker: expected string, received number');
  });

  it('never lets the key out: not in messages, fields, causes or apiMessage', async () => {
    // A hostile server echoes the Authorization header back in its error.
    const { url } = await serve((req, res) => json(res, 400, { detail: `bad header ${req.headers.authorization}` }));
    const err = await rejection(client(url).runStatus('r1'));
    expect(err.apiMessage).toContain('[redacted]');
    expect(allText(err)).not.toContain(KEY);

    // A socket closed mid-request: undici's error references the socket; the cause must not.
    const { url: rudeUrl } = await serve((req) => req.socket.destroy());
    const netErr = await rejection(client(rudeUrl, { retries: 1 }).runStatus('r1'));
    expect(netErr).toMatchObject({ code: 'network_error', retryable: true, status: undefined });
    expect(netErr.cause).toBeInstanceOf(Error);
    expect(Object.keys(netErr.cause as object)).not.toContain('socket');
    expect(allText(netErr)).not.toContain(KEY);
  });

  it('redacts the key from every string of an error body: code, message, URL-encoded and base64 copies', async () => {
    const key = 'sk/live+SECRET=key&42';
    const copies = [
      `Bearer ${key}`,
      encodeURIComponent(`Bearer ${key}`),
      Buffer.from(`Bearer ${key}`).toString('base64'),
      Buffer.from(`${key}`).toString('base64url'),
      Buffer.from(`x:${key}`).toString('base64'),
    ];
    const { url } = await serve((_req, res, n) =>
      json(res, n === 1 ? 500 : 400, { error: { code: `boom ${copies.join(' ')}`, message: `echo ${copies.join(' ')}`, type: 'x', param: null } }),
    );
    const err = await rejection(client(url, { apiKey: key, retries: 1 }).runStatus('r1'));
    expect(err.status).toBe(400);
    expect(err.code).toContain('[redacted]');
    const text = allText(err);
    for (const form of [key, encodeURIComponent(key), ...copies.slice(2)]) expect(text).not.toContain(form);
    // The key's base64 at any byte offset: no 8-character run of it survives.
    for (const offset of ['', 'x', 'xy']) {
      const core = Buffer.from(`${offset}${key}`).toString('base64').slice(4, 12);
      expect(text).not.toContain(core);
    }
  });

  it('reports a refused connection as a retryable network_error', async () => {
    const { url } = await serve((_req, res) => json(res, 200, {}));
    const dead = url; // closed below, so the port refuses
    await cleanups.shift()!();
    const calls: RequestInfo[] = [];
    const err = await rejection(client(dead, { retries: 2, onRequest: (i) => calls.push(i) }).startGeneration('venuea', 'K'));
    // Refused before sending: even the paid call may retry.
    expect(err).toMatchObject({ code: 'network_error', retryable: true });
    expect((err.cause as { code?: string }).code).toBe('ECONNREFUSED');
    expect(calls.map((c) => c.attempt)).toEqual([1, 2, 3]);
    expect(calls.every((c) => c.status === undefined && c.method === 'POST')).toBe(true);
  });

  it('reports every attempt to onRequest without the key', async () => {
    const { url } = await serve((_req, res, n) =>
      n === 1 ? json(res, 502, { detail: 'x' }) : json(res, 200, { run_id: 'r1', status: 'failed', venue: 'venueb', event_ticker: null, requested_url: null }),
    );
    const calls: RequestInfo[] = [];
    await client(url, { onRequest: (i) => calls.push(i) }).runStatus('r1');
    expect(calls.map(({ status, attempt, path, method }) => ({ status, attempt, path, method }))).toEqual([
      { status: 502, attempt: 1, path: '/predictions/reports/status/r1', method: 'GET' },
      { status: 200, attempt: 2, path: '/predictions/reports/status/r1', method: 'GET' },
    ]);
    expect(calls.every((c) => c.durationMs >= 0)).toBe(true);
    expect(JSON.stringify(calls)).not.toContain(KEY);
  });

  it('URL-encodes path segments', async () => {
    const { url, received } = await serve((_req, res) => json(res, 404, { detail: 'nope' }));
    await rejection(client(url).event('A/B C?d'));
    expect(received[0]!.url).toBe('/v1/predictions/events/A%2FB%20C%3Fd');
  });

  it('keeps at most maxConcurrency requests in flight', async () => {
    let inFlight = 0;
    let peak = 0;
    const { url } = await serve((_req, res) => {
      inFlight += 1;
      peak = Math.max(peak, inFlight);
      setTimeout(() => {
        inFlight -= 1;
        json(res, 200, { run_id: 'r', status: 'processing', venue: 'venuea', event_ticker: null, requested_url: null });
      }, 40);
    });
    const c = client(url, { maxConcurrency: 2 });
    await Promise.all(Array.from({ length: 7 }, () => c.runStatus('r')));
    expect(peak).toBe(2);
  });

  it('posts the model edge body and validates its rows', async () => {
    const edgeRow = {
      input_ticker: 'KXFED-25DEC',
      market_ticker: null,
      event_ticker: 'KXFED-25DEC',
      title: 'Fed',
      series_category: 'economics',
      model_probability: 60,
      market_probability: 50,
      edge_pp: 10,
      expected_return: 0.2,
      confidence_score: 7,
      total_volume: 1,
      total_open_interest: 1,
      status: 'scored',
      captured_at: '2026-11-20T12:00:00Z',
    };
    const { url, received } = await serve((_req, res) => json(res, 200, { run_id: 'run-1', captured_at: '2026-11-20T12:00:00Z', data: [edgeRow] }));
    const result = await client(url).edge(['KXFED-25DEC'], 'run-1');
    expect(result.run_id).toBe('run-1');
    expect(result.data[0]!.edge_pp).toBe(10);
    expect(JSON.parse(received[0]!.body)).toEqual({ tickers: ['KXFED-25DEC'], run_id: 'run-1' });
  });
});

describe('retry arithmetic', () => {
  it('reads Retry-After as seconds or an HTTP date, capped', () => {
    const now = Date.parse('2026-11-20T12:00:00Z');
    expect(parseRetryAfter('2', 30_000, now)).toBe(2000);
    expect(parseRetryAfter('120', 30_000, now)).toBe(30_000);
    expect(parseRetryAfter('Fri, 20 Nov 2026 12:00:05 GMT', 30_000, now)).toBe(5000);
    expect(parseRetryAfter('Fri, 20 Nov 2026 11:00:00 GMT', 30_000, now)).toBe(0);
    expect(parseRetryAfter('soon', 30_000, now)).toBeUndefined();
    expect(parseRetryAfter(undefined, 30_000, now)).toBeUndefined();
  });

  it('backs off exponentially with full jitter, capped', () => {
    expect(backoffDelay(0, 500, 30_000, () => 0.999)).toBe(499);
    expect(backoffDelay(3, 500, 30_000, () => 0.5)).toBe(2000);
    expect(backoffDelay(10, 500, 30_000, () => 0.999)).toBe(29_970);
    expect(backoffDelay(4, 500, 30_000, () => 0)).toBe(0);
  });
});
