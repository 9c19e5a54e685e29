// The daemon's HTTP adapter (node:http): /healthz, /metrics, the status page (`/`, an entity's page
// at /entities/{source}/{key}, their files under /assets/) and its JSON API under /api/. Read-only.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { errorBody } from './api-types.ts';

export interface HttpHandlers {
  health(): { httpStatus: number; body: unknown };
  metrics(): Promise<{ contentType: string; text: string }>;
  /** The status page's HTML, for `/` and /entities/...: its script fills it from /api/. */
  statusPage(): Promise<string>;
  /** The JSON API: `path` below /api/ (`alerts`, `entities/events/KXFED-25DEC`). */
  api(path: string, query: URLSearchParams): Promise<{ status: number; body: unknown }>;
  /** A file of the page under /assets/, or undefined when there is none of that name. */
  asset(name: string): Promise<{ contentType: string; body: Buffer } | undefined>;
}

export interface HttpServerOptions {
  port: number;
  /** The address to bind (EDGEWATCH_HOST): the server has no authentication, so loopback unless set. */
  host: string;
  handlers: HttpHandlers;
  onError?: (error: unknown) => void;
}

export interface HttpServer {
  /** The port it listens on (the one chosen when 0 was asked). */
  port: number;
  /** The address actually bound, as a URL: `http://127.0.0.1:<port>/`, `http://[::1]:<port>/`. */
  url: string;
  close(): Promise<void>;
}

/**
 * The page runs only its own script, from /assets/, and reads only this server: a second guard
 * behind the escaping of every text it shows.
 */
const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

function send(res: ServerResponse, status: number, type: string, body: string | Buffer): void {
  res.writeHead(status, {
    'content-type': type,
    'cache-control': 'no-store',
    'content-security-policy': CONTENT_SECURITY_POLICY,
    'x-content-type-options': 'nosniff',
  });
  res.end(body);
}

const JSON_TYPE = 'application/json; charset=utf-8';

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  send(res, status, JSON_TYPE, `${JSON.stringify(body, null, 2)}\n`);
}

export async function startHttpServer(options: HttpServerOptions): Promise<HttpServer> {
  const { handlers } = options;
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const path = url.pathname;
    const isApi = path === '/api' || path.startsWith('/api/');
    const answer = async (): Promise<void> => {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        if (isApi) return sendJson(res, 405, errorBody('method_not_allowed', `${req.method} ${path}: the API is read-only (GET)`));
        return send(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n');
      }
      if (path === '/healthz') {
        const { httpStatus, body } = handlers.health();
        return sendJson(res, httpStatus, body);
      }
      if (path === '/metrics') {
        const { contentType, text } = await handlers.metrics();
        return send(res, 200, contentType, text);
      }
      if (isApi) {
        const { status, body } = await handlers.api(path.slice('/api/'.length), url.searchParams);
        return sendJson(res, status, body);
      }
      if (path === '/' || /^\/entities\/[^/]+\/./.test(path)) return send(res, 200, 'text/html; charset=utf-8', await handlers.statusPage());
      if (path.startsWith('/assets/')) {
        const asset = await handlers.asset(path.slice('/assets/'.length));
        if (asset) return send(res, 200, asset.contentType, asset.body);
      }
      return send(res, 404, 'text/plain; charset=utf-8', 'not found: try /, /api/, /healthz or /metrics\n');
    };
    answer().catch((error: unknown) => {
      options.onError?.(error);
      if (res.headersSent) res.destroy();
      else if (isApi) sendJson(res, 500, errorBody('internal', 'internal error (the daemon logged it)'));
      else send(res, 500, 'text/plain; charset=utf-8', 'internal error\n');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { address, family, port } = server.address() as AddressInfo;
  return {
    port,
    url: `http://${family === 'IPv6' ? `[${address}]` : address}:${port}/`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
