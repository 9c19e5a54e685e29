// Slack through chat.postMessage. The client's own retries are off: the outbox retries and counts attempts.
import {
  ErrorCode,
  LogLevel,
  WebClient,
  type KnownBlock,
  type WebAPIHTTPError,
  type WebAPIPlatformError,
  type WebAPIRateLimitedError,
  type WebAPIRequestError,
} from '@slack/web-api';
import type { DeliveryOutcome, MessageRef } from '../../core/types.ts';
import { redact } from '../../core/redact.ts';
import { errorMessage } from '../../core/errors.ts';
import { delivered, failed } from './outcome.ts';
import type { Notifier } from './types.ts';
import { SLACK_TIMEOUT_MS } from './timeouts.ts';

export interface SlackMessage {
  /** Channel name (`#pm-alerts`) or id. */
  channel: string;
  text: string;
  blocks: KnownBlock[];
  /** An earlier message updated in place first (`chat.update`): a resolved alert's, a generation run's first. */
  update?: { ref: MessageRef; text: string; blocks: KnownBlock[] };
  /** Posted as a reply in this message's thread (`thread_ts`). */
  replyIn?: MessageRef;
}

/** The part of WebClient this adapter uses, so tests can hand in a client aimed at a local server. */
export interface SlackPoster {
  chat: {
    postMessage(args: { channel: string; text: string; blocks: KnownBlock[]; thread_ts?: string }): Promise<{ ok?: boolean; error?: string; channel?: string; ts?: string }>;
    update(args: { channel: string; ts: string; text: string; blocks: KnownBlock[] }): Promise<{ ok?: boolean; error?: string }>;
  };
}

export interface SlackNotifierOptions {
  token: string;
  /** Web API root, e.g. `http://127.0.0.1:4000/api/`; Slack's own by default. */
  apiUrl?: string;
  /** Request timeout, milliseconds. */
  timeoutMs?: number;
  client?: SlackPoster;
}

// Platform errors worth another attempt; every other `ok: false` (channel_not_found,
// invalid_auth, not_in_channel, ...) will fail the same way again.
const RETRYABLE_PLATFORM_ERRORS = new Set([
  'ratelimited',
  'rate_limited',
  'internal_error',
  'fatal_error',
  'service_unavailable',
  'request_timeout',
  'team_added_to_org',
]);

function slackApiRoot(apiUrl: string): string {
  return apiUrl.endsWith('/') ? apiUrl : `${apiUrl}/`;
}


export function createSlackClient(token: string, apiUrl?: string, timeoutMs = SLACK_TIMEOUT_MS): WebClient {
  return new WebClient(token, {
    ...(apiUrl !== undefined ? { slackApiUrl: slackApiRoot(apiUrl) } : {}),
    retryConfig: { retries: 0 },
    logLevel: LogLevel.ERROR,
    rejectRateLimitedCalls: true,
    timeout: timeoutMs,
    // A method name is never an absolute URL here; keep every request on the configured root.
    allowAbsoluteUrls: false,
  });
}

export function slackOutcome(error: unknown): DeliveryOutcome {
  const code = (error as { code?: unknown } | null)?.code;
  switch (code) {
    case ErrorCode.RateLimitedError: {
      const retryAfter = (error as WebAPIRateLimitedError).retryAfter;
      return failed(true, `slack: rate limited, retry after ${retryAfter} s`, retryAfter * 1000);
    }
    case ErrorCode.PlatformError: {
      const name = (error as WebAPIPlatformError).data.error;
      return failed(RETRYABLE_PLATFORM_ERRORS.has(name), `slack: ${name}`);
    }
    case ErrorCode.HTTPError: {
      const status = (error as WebAPIHTTPError).statusCode;
      return failed(status >= 500 || status === 408 || status === 429, `slack: HTTP ${status}`);
    }
    case ErrorCode.RequestError: {
      const original = (error as WebAPIRequestError).original;
      const cause = (original as { cause?: { code?: unknown } }).cause?.code;
      return failed(true, `slack: request failed: ${typeof cause === 'string' ? cause : errorMessage(original)}`);
    }
    default:
      // A 429 without a readable Retry-After, or anything unexpected on the way: try again later.
      return failed(true, `slack: ${errorMessage(error)}`);
  }
}

export function createSlackNotifier(options: SlackNotifierOptions): Notifier<SlackMessage> {
  const { token } = options;
  const client = options.client ?? createSlackClient(token, options.apiUrl, options.timeoutMs);
  return {
    async send(message) {
      try {
        // The update first: a retry after a failed reply updates again (the same content), then replies.
        if (message.update) {
          const { ref, text, blocks } = message.update;
          const updated = await client.chat.update({ channel: ref.channel, ts: ref.ts, text, blocks });
          if (updated.ok === false) return failed(false, `slack: chat.update: ${redact(String(updated.error ?? 'not ok'), [token])}`);
        }
        const thread = message.replyIn;
        const result = await client.chat.postMessage({
          channel: thread?.channel ?? message.channel,
          text: message.text,
          blocks: message.blocks,
          ...(thread ? { thread_ts: thread.ts } : {}),
        });
        if (result.ok === false) return failed(false, `slack: ${redact(String(result.error ?? 'not ok'), [token])}`);
        // Where the message (or the thread it replied in) is, to update it and reply to it later.
        const ref = thread ?? (typeof result.channel === 'string' && typeof result.ts === 'string' ? { channel: result.channel, ts: result.ts } : undefined);
        return ref ? { ok: true, ref } : delivered;
      } catch (error) {
        const outcome = slackOutcome(error);
        return outcome.ok ? outcome : { ...outcome, error: redact(outcome.error, [token]).replace(/xox[a-z]-[A-Za-z0-9-]+/g, '[redacted]') };
      }
    },
  };
}
