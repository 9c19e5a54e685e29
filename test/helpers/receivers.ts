// Local servers that stand in for the outside world in delivery tests, each on port 0:
// Slack's Web API, a webhook receiver, an SMTP server. Each records what it received.
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { SMTPServer } from 'smtp-server';

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

async function closeHttp(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

// --- Slack -------------------------------------------------------------------------------

export interface SlackCall {
  method: string;
  authorization: string | undefined;
  channel: string | null;
  text: string | null;
  /** Parsed from the form's JSON `blocks`. */
  blocks: unknown;
  /** The raw form body, for "never appears anywhere" checks. */
  raw: string;
}

export type SlackReply = (call: SlackCall, res: ServerResponse) => void;

export interface SlackApi {
  /** `http://127.0.0.1:<port>/api/`, for SLACK_API_URL. */
  apiUrl: string;
  calls: SlackCall[];
  /** How the next calls are answered; `ok: true` by default. */
  reply: SlackReply;
  close(): Promise<void>;
}

export const slackOk: SlackReply = (_call, res) => slackJson(res, { ok: true, channel: 'C0123', ts: '1700000000.000100' });

export function slackJson(res: ServerResponse, body: unknown, status = 200, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

/** A stand-in for Slack's Web API: records every call, answers with `reply`. */
export async function startSlackApi(reply: SlackReply = slackOk): Promise<SlackApi> {
  const calls: SlackCall[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const form = new URLSearchParams(raw);
      const blocks = form.get('blocks');
      const call: SlackCall = {
        method: (req.url ?? '').replace(/^\/api\//, ''),
        authorization: req.headers.authorization,
        channel: form.get('channel'),
        text: form.get('text'),
        blocks: blocks === null ? null : JSON.parse(blocks),
        raw,
      };
      calls.push(call);
      api.reply(call, res);
    });
  });
  const port = await listen(server);
  const api: SlackApi = { apiUrl: `http://127.0.0.1:${port}/api/`, calls, reply, close: () => closeHttp(server) };
  return api;
}

// --- Webhooks ----------------------------------------------------------------------------

export interface WebhookRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** When it arrived, for ordering checks. */
  at: number;
}

/** Answers one request; may hold it open (never calling `res.end`) to simulate a slow receiver. */
export type WebhookReply = (request: WebhookRequest, res: ServerResponse) => void;

export interface WebhookReceiver {
  url: string;
  requests: WebhookRequest[];
  reply: WebhookReply;
  close(): Promise<void>;
}

export const answer =
  (status: number, headers: Record<string, string> = {}): WebhookReply =>
  (_request, res) => {
    res.writeHead(status, headers).end();
  };

/** Answers requests in turn from `replies`, the last one repeating. */
export function inTurn(...replies: WebhookReply[]): WebhookReply {
  let next = 0;
  return (request, res) => replies[Math.min(next++, replies.length - 1)]!(request, res);
}

export async function startWebhookReceiver(reply: WebhookReply = answer(200)): Promise<WebhookReceiver> {
  const requests: WebhookRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request: WebhookRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      requests.push(request);
      receiver.reply(request, res);
    });
  });
  // Thousands of requests from a few keep-alive sockets: no per-request limits in the way.
  server.keepAliveTimeout = 5_000;
  const port = await listen(server);
  const receiver: WebhookReceiver = { url: `http://127.0.0.1:${port}/hooks/edgewatch`, requests, reply, close: () => closeHttp(server) };
  return receiver;
}

// --- SMTP --------------------------------------------------------------------------------

export interface ReceivedMail {
  from: string | undefined;
  to: string[];
  raw: string;
}

export interface SmtpReceiver {
  /** `smtp://127.0.0.1:<port>`, for SMTP_URL. */
  url: string;
  mails: ReceivedMail[];
  close(): Promise<void>;
}

export async function startSmtp(): Promise<SmtpReceiver> {
  const mails: ReceivedMail[] = [];
  const server = new SMTPServer({
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
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.server.address() as AddressInfo;
  return { url: `smtp://127.0.0.1:${port}`, mails, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
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
