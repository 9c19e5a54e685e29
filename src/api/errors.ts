// The one error class of the research API client. `code` is stable to match on: the API's own
// code from `{error: {code}}` when it sends one, else a generic one (see GenericApiErrorCode).
// Nothing here may carry the API key: causes are rebuilt from name/code/message only (undici
// errors can reference requests that hold the Authorization header) and texts are redacted.
import type { z } from 'zod';
import { redact } from '../core/redact.ts';

export type GenericApiErrorCode =
  | `http_${number}`
  | 'network_error'
  | 'timeout'
  | 'invalid_response'
  | 'invalid_request'
  | 'response_too_large'
  | 'page_limit'
  | 'time_limit'
  | 'client_closed';

export interface ApiErrorInit {
  code: string;
  resource: string;
  retryable: boolean;
  status?: number;
  apiMessage?: string;
  /** Overrides the message built from the other fields. */
  message?: string;
  cause?: unknown;
}

export class ApiError extends Error {
  /** The API's error code, or a GenericApiErrorCode. */
  readonly code: string;
  /** The HTTP status, or undefined when no response came. */
  readonly status: number | undefined;
  /** The message the API sent (`detail`, or `error.message`). */
  readonly apiMessage: string | undefined;
  /** Whether trying again later may succeed. */
  readonly retryable: boolean;
  /** What was being fetched, e.g. `events list`, `trust venuea/KXFED-25DEC`. */
  readonly resource: string;

  constructor(init: ApiErrorInit) {
    const message =
      init.message ??
      `${init.resource}: ${init.code}${init.status === undefined ? '' : ` (HTTP ${init.status})`}` +
        (init.apiMessage ? `: ${init.apiMessage}` : '');
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'ApiError';
    this.code = init.code;
    this.status = init.status;
    this.apiMessage = init.apiMessage;
    this.retryable = init.retryable;
    this.resource = init.resource;
  }
}

/**
 * A plain Error holding only the name, code and message of a low-level error (and of its
 * causes, a few levels deep), redacted: safe to attach as `cause`.
 */
export function safeCause(err: unknown, secrets: ReadonlyArray<string | undefined>, depth = 0): Error | undefined {
  if (err === undefined || err === null || depth > 3) return undefined;
  const source = err instanceof Error ? err : new Error(String(err));
  const inner = safeCause((source as { cause?: unknown }).cause, secrets, depth + 1);
  const copy = new Error(redact(source.message, secrets), inner ? { cause: inner } : undefined);
  copy.name = source.name;
  const code = (source as { code?: unknown }).code;
  if (typeof code === 'string') Object.assign(copy, { code });
  return copy;
}

/**
 * Error text of an API body: `{error: {code, message}}` (reports) or `{detail}` (others). Every
 * string is redacted: a hostile or buggy server may echo the Authorization header anywhere.
 */
export function parseErrorBody(body: unknown, secrets: ReadonlyArray<string | undefined>): { code?: string; message?: string } {
  if (typeof body !== 'object' || body === null) return {};
  const record = body as Record<string, unknown>;
  const error = record['error'];
  if (typeof error === 'object' && error !== null) {
    const { code, message } = error as Record<string, unknown>;
    return {
      ...(typeof code === 'string' && code !== '' ? { code: redact(code, secrets) } : {}),
      ...(typeof message === 'string' ? { message: redact(message, secrets) } : {}),
    };
  }
  const detail = record['detail'];
  if (typeof detail === 'string') return { message: redact(detail, secrets) };
  if (detail === undefined) return {};
  const text = Array.isArray(detail) ? describeValidationList(detail) : undefined;
  return { message: redact(text ?? JSON.stringify(detail).slice(0, 500), secrets) };
}

/**
 * A 422 detail as a list of `{loc, msg}` (FastAPI's shape) read as `body.tickers: <msg>; ...`, so
 * the message names what was invalid; undefined when the list is not of that shape.
 */
function describeValidationList(items: unknown[]): string | undefined {
  const parts: string[] = [];
  for (const item of items) {
    const { loc, msg } = (typeof item === 'object' && item !== null ? item : {}) as Record<string, unknown>;
    if (typeof msg !== 'string') return undefined;
    const where = Array.isArray(loc) ? loc.map(String).join('.') : '';
    parts.push(where === '' ? msg : `${where}: ${msg}`);
  }
  return parts.length === 0 ? undefined : parts.join('; ').slice(0, 500);
}

/**
 * `field edge_pp: expected number, received string` for the first issue of a zod error.
 * The path is dotted with indexes in brackets (`markets[2].status`).
 */
export function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid';
  const path = issue.path
    .map((part, i) => (typeof part === 'number' ? `[${part}]` : `${i === 0 ? '' : '.'}${String(part)}`))
    .join('');
  const message = issue.message.replace(/^Invalid input: /, '');
  const more = error.issues.length > 1 ? ` (and ${error.issues.length - 1} more)` : '';
  return `${path === '' ? 'body' : `field ${path}`}: ${message}${more}`;
}
