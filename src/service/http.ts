// The daemon's HTTP adapter (node:http): /healthz, /metrics and the status page at /. Read-only.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HttpHandlers {
  health(): { httpStatus: number; body: unknown };
  metrics(): Promise<{ contentType: string; text: string }>;
  statusPage(): Promise<string>;
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

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, {
    'content-type': type,
    'cache-control': 'no-store',
    // The page runs no script at all; this is a second guard behind the escaping.
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
    'x-content-type-options': 'nosniff',
  });
  res.end(body);
}

export async function startHttpServer(options: HttpServerOptions): Promise<HttpServer> {
  const { handlers } = options;
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const answer = async (): Promise<void> => {
      if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n');
      if (path === '/healthz') {
        const { httpStatus, body } = handlers.health();
        return send(res, httpStatus, 'application/json; charset=utf-8', `${JSON.stringify(body, null, 2)}\n`);
      }
      if (path === '/metrics') {
        const { contentType, text } = await handlers.metrics();
        return send(res, 200, contentType, text);
      }
      if (path === '/') return send(res, 200, 'text/html; charset=utf-8', await handlers.statusPage());
      return send(res, 404, 'text/plain; charset=utf-8', 'not found: try /, /healthz or /metrics\n');
    };
    answer().catch((error: unknown) => {
      options.onError?.(error);
      if (!res.headersSent) send(res, 500, 'text/plain; charset=utf-8', 'internal error\n');
      else res.destroy();
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
