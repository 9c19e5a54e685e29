// Local servers that stand in for the outside world, each on port 0: Slack's Web API, a webhook
// receiver, SMTP servers, and a plain HTTP server for scripted answers. The stand-ins record what
// they received; the HTTP servers and startSmtp can be closed (connections refused) and reopened
// on the same port, for outage tests.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { Webhook } from 'standardwebhooks';
import { waitFor } from './wait.ts';

export interface LocalServer {
  port: number;
  close(): Promise<void>;
  /** Listens again on the same port after `close`. */
  reopen(): Promise<void>;
}

/** An HTTP server on 127.0.0.1 that reads each request whole, then lets `handle` answer it. */
export async function startHttpServer(handle: (req: IncomingMessage, body: string, res: ServerResponse) => void): Promise<LocalServer> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, Buffer.concat(chunks).toString('utf8'), res));
  });
  // Thousands of requests from a few keep-alive sockets: no per-request limits in the way.
  server.keepAliveTimeout = 5_000;
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  await listen(0);
  const { port } = server.address() as AddressInfo;
  return {
    port,
    close: async () => {
      server.closeAllConnections();
      // Resolves on a server already closed too (close then reports ERR_SERVER_NOT_RUNNING).
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    reopen: () => listen(port),
  };
}

// --- Slack -------------------------------------------------------------------------------

export interface SlackCall {
  /** The Web API method, e.g. `chat.postMessage`. */
  method: string;
  /** The request path, e.g. `/api/chat.postMessage`. */
  path: string;
  authorization: string | undefined;
  channel: string | null;
  text: string | null;
  /** Parsed from the form's JSON `blocks`. */
  blocks: unknown;
  /** `chat.update`: the message updated. */
  ts: string | null;
  /** A reply's thread (`chat.postMessage` with `thread_ts`). */
  thread_ts: string | null;
  /** The raw form body, for "never appears anywhere" checks. */
  raw: string;
}

export type SlackReply = (call: SlackCall, res: ServerResponse) => void;

export interface SlackApi extends LocalServer {
  /** `http://127.0.0.1:<port>/api/`, for SLACK_API_URL. */
  apiUrl: string;
  calls: SlackCall[];
  /** How the next calls are answered; `ok: true` by default. */
  reply: SlackReply;
}

export const slackOk: SlackReply = (_call, res) => slackJson(res, { ok: true, channel: 'C0123', ts: '1700000000.000100' });

/** `ok: true`, each posted message with a ts of its own (1700000000.000001, .000002, ...). */
export function slackNumbered(): SlackReply {
  let posted = 0;
  return (call, res) => slackJson(res, { ok: true, channel: 'C0123', ts: call.method === 'chat.update' ? call.ts : `1700000000.${String(++posted).padStart(6, '0')}` });
}

export function slackJson(res: ServerResponse, body: unknown, status = 200, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

/** A stand-in for Slack's Web API: records every call, answers with `reply`. */
export async function startSlackApi(reply: SlackReply = slackOk): Promise<SlackApi> {
  const calls: SlackCall[] = [];
  const server = await startHttpServer((req, raw, res) => {
    const form = new URLSearchParams(raw);
    const blocks = form.get('blocks');
    const path = req.url ?? '';
    const call: SlackCall = {
      method: path.replace(/^\/api\//, ''),
      path,
      authorization: req.headers.authorization,
      channel: form.get('channel'),
      text: form.get('text'),
      blocks: blocks === null ? null : JSON.parse(blocks),
      ts: form.get('ts'),
      thread_ts: form.get('thread_ts'),
      raw,
    };
    calls.push(call);
    api.reply(call, res);
  });
  const api: SlackApi = { ...server, apiUrl: `http://127.0.0.1:${server.port}/api/`, calls, reply };
  return api;
}

// --- Webhooks ----------------------------------------------------------------------------

export interface WebhookRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The body parsed as JSON (what edgewatch sends always is). */
  json(): Record<string, unknown>;
  /** When it arrived, for ordering checks. */
  at: number;
}

/** Answers one request; may hold it open (never calling `res.end`) to simulate a slow receiver. */
export type WebhookReply = (request: WebhookRequest, res: ServerResponse) => void;

export interface WebhookReceiver extends LocalServer {
  /** `http://127.0.0.1:<port>/hooks/edgewatch`, for a webhook channel's url. */
  url: string;
  requests: WebhookRequest[];
  /** How the next requests are answered; 200 by default. */
  reply: WebhookReply;
  /** The first request that matches, once it has arrived. */
  waitFor(what: string, match: (request: WebhookRequest) => boolean, timeoutMs?: number): Promise<WebhookRequest>;
}

export const answer =
  (status: number, headers: Record<string, string> = {}): WebhookReply =>
  (_request, res) => {
    res.writeHead(status, headers).end();
  };

/** Never answers: the sender waits until it gives up or the receiver closes. */
export const holdOpen: WebhookReply = () => {};

/** Answers requests in turn from `replies`, the last one repeating. */
export function inTurn(...replies: WebhookReply[]): WebhookReply {
  let next = 0;
  return (request, res) => replies[Math.min(next++, replies.length - 1)]!(request, res);
}

export async function startWebhookReceiver(reply: WebhookReply = answer(200)): Promise<WebhookReceiver> {
  const requests: WebhookRequest[] = [];
  const server = await startHttpServer((req, body, res) => {
    const request: WebhookRequest = {
      method: req.method ?? '',
      path: req.url ?? '',
      headers: req.headers,
      body,
      json: () => JSON.parse(body) as Record<string, unknown>,
      at: Date.now(),
    };
    requests.push(request);
    receiver.reply(request, res);
  });
  const receiver: WebhookReceiver = {
    ...server,
    url: `http://127.0.0.1:${server.port}/hooks/edgewatch`,
    requests,
    reply,
    waitFor: (what, match, timeoutMs = 15_000) => waitFor(`webhook: ${what}`, () => requests.find(match), timeoutMs),
  };
  return receiver;
}

/** A receiver's own check, with the published `standardwebhooks` library: throws unless the signature and timestamp hold; returns the payload. */
export function verifyWebhook(request: Pick<WebhookRequest, 'body' | 'headers'>, secret: string): unknown {
  return new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
}

// --- SMTP --------------------------------------------------------------------------------

export interface ReceivedMail {
  from: string | undefined;
  to: string[];
  raw: string;
}

export interface SmtpReceiver extends Omit<LocalServer, 'port'> {
  /** `smtp://127.0.0.1:<port>`, for SMTP_URL. */
  url: string;
  mails: ReceivedMail[];
}

/** An SMTP server that records every message (no TLS, login optional); `options` change that, e.g. to refuse a recipient. */
export async function startSmtp(options: SMTPServerOptions = {}): Promise<SmtpReceiver> {
  const mails: ReceivedMail[] = [];
  // A closed SMTPServer that listens again greets with 421 (shutting down): reopen starts a new one.
  const create = () =>
    new SMTPServer({
      disabledCommands: ['STARTTLS'],
      authOptional: true,
      logger: false,
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          mails.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : undefined,
            to: session.envelope.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks).toString('utf8'),
          });
          callback();
        });
      },
      ...options,
    });
  let server = create();
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.server.off('error', reject);
        resolve();
      });
    });
  await listen(0);
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    reopen: () => {
      server = create();
      return listen(port);
    },
  };
}

export interface StalledSmtp {
  /** `smtp://127.0.0.1:<port>`, for SMTP_URL. */
  url: string;
  /** Connections accepted so far. */
  connections(): number;
  close(): Promise<void>;
}

/** An SMTP server that greets and then never answers again: every client waits on its socket. */
export async function startStalledSmtp(): Promise<StalledSmtp> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server = createNetServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    socket.write('220 stalled.example ESMTP\r\n');
    // Whatever comes next (EHLO, ...) is read and never answered.
    socket.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    connections: () => accepted,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A header of a raw message, unfolded; MIME encoded-words decoded. */
export function mailHeader(raw: string, name: string): string | undefined {
  const head = raw.split(/\r?\n\r?\n/)[0] ?? '';
  const unfolded = head.replace(/\r?\n[ \t]+/g, ' ');
  const value = new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(unfolded)?.[1]?.trim();
  return value?.replace(/=\?utf-8\?([BQ])\?([^?]*)\?=\s*/gi, (_, enc: string, text: string) =>
    enc.toUpperCase() === 'B'
      ? Buffer.from(text, 'base64').toString('utf8')
      : Buffer.from(text.replace(/_/g, ' ').replace(/=([0-9A-F]{2})/gi, (__, h: string) => String.fromCharCode(parseInt(h, 16))), 'latin1').toString('utf8'),
  );
}

/** The decoded body of the first MIME part of a content type (quoted-printable or base64). */
export function mailPart(raw: string, type: 'text/html' | 'text/plain'): string {
  const chunks = raw.split(/\r?\n--[^\r\n]+/);
  const chunk = chunks.find((c) => new RegExp(`content-type:\\s*${type}`, 'i').test(c));
  if (chunk === undefined) throw new Error(`no ${type} part`);
  const [head = '', ...rest] = chunk.split(/\r?\n\r?\n/);
  const body = rest.join('\n\n');
  if (/content-transfer-encoding:\s*base64/i.test(head)) return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (/content-transfer-encoding:\s*quoted-printable/i.test(head)) {
    const bytes = body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    return Buffer.from(bytes, 'latin1').toString('utf8');
  }
  return body;
}
