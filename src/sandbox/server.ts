// The HTTP adapter: auth, fault injection, request log, and the simulated clock's timer.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { errorBody, familyOf, type Reply, type ServerSentEvent } from './params.ts';
import { route } from './routes.ts';
import type { Fault, Sandbox, SandboxOptions, SandboxRequest } from './types.ts';
import { SimWorld } from './world.ts';

export const DEFAULT_START = '2026-11-20T12:00:00Z';
const TICK_MS = 250;
const MAX_BODY = 1_000_000;

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY) chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  if (res.destroyed || res.writableEnded) return;
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(body);
}

/** Server-sent events, one write each, as a streaming API sends them. */
function sendEvents(res: ServerResponse, status: number, events: ServerSentEvent[]): void {
  if (res.destroyed || res.writableEnded) return;
  res.writeHead(status, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const { event, data } of events) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  res.end();
}

function bearerKey(req: IncomingMessage): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
}

function authorized(req: IncomingMessage, apiKey: string | undefined): boolean {
  const key = bearerKey(req);
  if (key === undefined) return false;
  return apiKey === undefined || key === apiKey;
}

/**
 * Requests in flight per path and client (Bearer key), and the most clients seen in flight at once
 * per path: how many processes polled one source at the same time.
 */
function pollerCounter() {
  const inFlight = new Map<string, Map<string, number>>();
  const most = new Map<string, number>();
  return {
    begin(path: string, key: string): () => void {
      let clients = inFlight.get(path);
      if (!clients) inFlight.set(path, (clients = new Map<string, number>()));
      clients.set(key, (clients.get(key) ?? 0) + 1);
      most.set(path, Math.max(most.get(path) ?? 0, clients.size));
      return () => {
        const left = (clients.get(key) ?? 1) - 1;
        if (left > 0) clients.set(key, left);
        else clients.delete(key);
      };
    },
    most: (path: string) => most.get(path) ?? 0,
  };
}

export async function startSandbox(options: SandboxOptions & { port?: number; host?: string } = {}): Promise<Sandbox> {
  const seed = options.seed ?? 1;
  const startTime = (options.startTime ?? new Date(DEFAULT_START)).getTime();
  const world = new SimWorld({ seed, events: options.events ?? 60, kpis: options.kpis ?? 40, startTime, credits: options.credits ?? 30 });
  if (options.resumeAt) {
    const minutes = (options.resumeAt.getTime() - startTime) / 60_000;
    if (!(minutes >= 0)) throw new Error(`sandbox: cannot resume at ${options.resumeAt.toISOString()}, before the world's start ${new Date(startTime).toISOString()}`);
    world.advance(minutes);
  }
  const faults: Array<Fault & { remaining: number }> = [];
  const requests: SandboxRequest[] = [];

  function takeFault(method: string, path: string): Fault | undefined {
    const index = faults.findIndex((f) => path.startsWith(f.path) && (f.method === undefined || f.method.toUpperCase() === method));
    if (index < 0) return undefined;
    const fault = faults[index]!;
    if (--fault.remaining <= 0) faults.splice(index, 1);
    return fault;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://sandbox.local');
    const method = (req.method ?? 'GET').toUpperCase();
    const query: Record<string, string> = {};
    for (const [k, v] of url.searchParams) query[k] = v;
    const request: SandboxRequest = { method, path: url.pathname, query, key: bearerKey(req), at: Date.now() };
    requests.push(request);
    const body = await readBody(req);
    const inner = url.pathname.startsWith('/v1/') ? url.pathname.slice(3) : null;
    const family = familyOf(inner ?? '');

    const fault = takeFault(method, url.pathname);
    if (fault?.delayMs) await sleep(fault.delayMs);
    if (fault && (fault.status !== undefined || fault.body !== undefined)) {
      const status = fault.status ?? 200;
      const text = typeof fault.body === 'function' ? fault.body(request) : (fault.body ?? JSON.stringify(errorBody(family, status, `Injected fault: HTTP ${status}`)));
      send(res, status, text, fault.headers);
      return;
    }

    let reply: Reply;
    if (!authorized(req, options.apiKey)) reply = { status: 401, body: errorBody(family, 401, 'Missing or invalid API key') };
    else if (inner === null) reply = { status: 404, body: errorBody(family, 404, 'Not Found') };
    else reply = route(world, { method, path: inner, query, body });
    if (reply.events) sendEvents(res, reply.status, reply.events);
    else send(res, reply.status, JSON.stringify(reply.body), fault?.headers);
  }

  const pollers = pollerCounter();
  const server = createServer((req, res) => {
    const key = bearerKey(req);
    if (key !== undefined) res.once('close', pollers.begin(new URL(req.url ?? '/', 'http://sandbox.local').pathname, key));
    handle(req, res).catch((error: unknown) => {
      send(res, 500, JSON.stringify(errorBody('error', 500, `sandbox bug: ${String(error)}`)));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;

  // Real-time movement, when asked for: speed simulated minutes per real second.
  const speed = options.speed ?? 0;
  const timer = speed > 0 ? setInterval(() => world.advance((speed * TICK_MS) / 1000), TICK_MS) : undefined;
  timer?.unref();

  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    seed,
    startTime: new Date(startTime),
    now: () => new Date(world.now),
    advance: (minutes) => world.advance(minutes),
    inject: (fault) => {
      faults.push({ ...fault, remaining: fault.count ?? 1 });
    },
    clearFaults: () => {
      faults.length = 0;
    },
    requests,
    concurrentPollers: (path) => pollers.most(path),
    world: world.hooks(),
    close: async () => {
      if (timer) clearInterval(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
