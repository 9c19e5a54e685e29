// Webhooks per Standard Webhooks: POST of the raw body, webhook-id/-timestamp, and a signature when a secret is set.
import { request, type Dispatcher } from 'undici';
import { Webhook } from 'standardwebhooks';
import type { DeliveryOutcome } from '../../core/types.ts';
import { parseRetryAfter } from '../../core/retry-after.ts';
import { errorMessage } from '../../core/errors.ts';
import { delivered, failed } from './outcome.ts';
import type { Notifier } from './types.ts';
import { WEBHOOK_TIMEOUT_MS } from './timeouts.ts';

export interface WebhookMessage {
  url: string;
  /** The body's id: `webhook-id`, the same on every retry. */
  id: string;
  /** The serialized payload, sent byte for byte as given (never re-serialized). */
  body: string;
  /** `whsec_...`; signs the request when present. */
  secret?: string;
  headers?: Record<string, string>;
}

export interface WebhookNotifierOptions {
  /** Whole-request timeout, milliseconds. */
  timeoutMs?: number;
  dispatcher?: Dispatcher;
  /** The clock, for the timestamp and signature. */
  now?: () => Date;
}


const RESERVED = /^(content-type|webhook-.*)$/i;

export function webhookHeaders(message: WebhookMessage, at: Date): Record<string, string> {
  const headers: Record<string, string> = {};
  // Custom headers first and never over ours (rule validation rejects them; this is the backstop).
  for (const [name, value] of Object.entries(message.headers ?? {})) {
    if (!RESERVED.test(name)) headers[name.toLowerCase()] = value;
  }
  headers['content-type'] = 'application/json';
  headers['webhook-id'] = message.id;
  headers['webhook-timestamp'] = String(Math.floor(at.getTime() / 1000));
  if (message.secret !== undefined) headers['webhook-signature'] = new Webhook(message.secret).sign(message.id, at, message.body);
  return headers;
}

function networkError(error: unknown): string {
  const e = error as { name?: unknown; code?: unknown; cause?: { code?: unknown } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return 'timeout';
  if (typeof e.code === 'string') return e.code;
  if (typeof e.cause?.code === 'string') return e.cause.code;
  return errorMessage(error);
}

function refusedLocally(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === 'UND_ERR_INVALID_ARG' || code === 'ERR_INVALID_URL';
}

export function createWebhookNotifier(options: WebhookNotifierOptions = {}): Notifier<WebhookMessage> {
  const timeoutMs = options.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  const now = options.now ?? (() => new Date());
  return {
    async send(message): Promise<DeliveryOutcome> {
      let headers: Record<string, string>;
      try {
        headers = webhookHeaders(message, now());
      } catch (error) {
        // A malformed secret: retrying cannot help. The secret itself is never in the message.
        return failed(false, `webhook: cannot sign: ${error instanceof Error ? error.name : 'error'}`);
      }
      const signal = AbortSignal.timeout(timeoutMs);
      try {
        const response = await request(message.url, {
          method: 'POST',
          headers,
          body: message.body,
          signal,
          ...(options.dispatcher !== undefined ? { dispatcher: options.dispatcher } : {}),
        });
        await response.body.dump();
        const status = response.statusCode;
        if (status >= 200 && status < 300) return delivered;
        const retryable = status === 429 || status === 408 || status >= 500;
        const retryAfterMs = retryable ? parseRetryAfter(response.headers['retry-after']) : undefined;
        return failed(retryable, `webhook: HTTP ${status}`, retryAfterMs);
      } catch (error) {
        if (signal.aborted) return failed(true, `webhook: timeout after ${timeoutMs} ms`);
        // Refused before anything was sent (a header value with a line break or outside Latin-1,
        // a malformed URL): every attempt would be refused the same way. The message names the
        // header, never its value.
        if (refusedLocally(error)) return failed(false, `webhook: cannot send: ${errorMessage(error)}`);
        return failed(true, `webhook: ${networkError(error)}`);
      }
    },
  };
}
