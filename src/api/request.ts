// One call to the research API: an attempt (bounded in time, body size and nesting) and the
// retries around it, with exponential backoff and full jitter. Every error is an ApiError whose
// texts are redacted of the key.
import { setTimeout as sleep } from 'node:timers/promises';
import { request, type Dispatcher } from 'undici';
import { errorCode, errorMessage } from '../core/errors.ts';
import { redact } from '../core/redact.ts';
import { parseRetryAfter } from '../core/retry-after.ts';
import { ApiError, parseErrorBody, safeCause } from './errors.ts';
import { MAX_NESTING, pathTooDeep } from './nesting.ts';
import { RETRYABLE_STATUSES, backoffDelay } from './retry.ts';
import type { Semaphore } from './semaphore.ts';

export interface RequestInfo {
  method: string;
  /** Path below the base URL, without the query. */
  path: string;
  /** HTTP status, or undefined when no response came (network error, timeout). */
  status: number | undefined;
  durationMs: number;
  /** 1 for the first attempt. */
  attempt: number;
}

/** What every request of one client shares: its settings, connection pool and concurrency limit. */
export interface RequestContext {
  baseUrl: string;
  /** `accept`, and `authorization` when there is a key. */
  headers: Readonly<Record<string, string>>;
  /** Removed from every error text: the API key. */
  secrets: ReadonlyArray<string | undefined>;
  timeoutMs: number;
  retries: number;
  backoffBaseMs: number;
  maxBackoffMs: number;
  maxResponseBytes: number;
  dispatcher: Dispatcher;
  semaphore: Semaphore;
  onRequest: ((info: RequestInfo) => void) | undefined;
  /** Set once the client is closed: calls still going end as client_closed. */
  closed: boolean;
}

export type Query = Record<string, string | number | boolean | undefined>;

export interface Call {
  method: 'GET' | 'POST';
  path: string;
  query?: Query;
  body?: unknown;
  resource: string;
  /** Paid calls: no retry once the request may have reached the server. */
  paid?: boolean;
  /** This call's own time limit per attempt, instead of the client's. */
  timeoutMs?: number;
}

/** A call whose body holds rows under `data`, each named in errors by its `rowKey` field. */
export interface ListCall extends Call {
  rowKey: string;
}

const MB = 1024 * 1024;

// Errors raised before any byte left: retrying cannot charge twice.
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'EHOSTUNREACH', 'ENETUNREACH']);

type Attempt = { body: unknown } | { error: ApiError; retryAfterMs?: number };

/** The parsed JSON body of a 2xx answer to `call`, after as many attempts as it takes and may. */
export async function send(ctx: RequestContext, call: Call): Promise<unknown> {
  for (let attemptNo = 1; ; attemptNo += 1) {
    if (ctx.closed) throw new ApiError({ code: 'client_closed', resource: call.resource, retryable: false });
    const outcome = await attempt(ctx, call, attemptNo);
    if ('body' in outcome) return outcome.body;
    if (!outcome.error.retryable || attemptNo > ctx.retries) throw outcome.error;
    await sleep(outcome.retryAfterMs ?? backoffDelay(attemptNo - 1, ctx.backoffBaseMs, ctx.maxBackoffMs));
  }
}

/** One attempt: the parsed JSON body of a 2xx, or the ApiError it came to with retry hints. */
async function attempt(ctx: RequestContext, call: Call, attemptNo: number): Promise<Attempt> {
  const release = await ctx.semaphore.acquire();
  const started = performance.now();
  let status: number | undefined;
  try {
    const response = await request(`${ctx.baseUrl}${call.path}${queryString(call.query)}`, {
      method: call.method,
      dispatcher: ctx.dispatcher,
      headers: call.body === undefined ? ctx.headers : { ...ctx.headers, 'content-type': 'application/json' },
      body: call.body === undefined ? undefined : JSON.stringify(call.body),
      signal: AbortSignal.timeout(call.timeoutMs ?? ctx.timeoutMs),
    });
    status = response.statusCode;
    return await answer(ctx, call, response);
  } catch (err) {
    return { error: requestFailed(ctx, call, err, status) };
  } finally {
    release();
    try {
      ctx.onRequest?.({ method: call.method, path: call.path, status, durationMs: performance.now() - started, attempt: attemptNo });
    } catch {
      // A metrics hook must never fail a request.
    }
  }
}

/** What a response comes to: its body (2xx), or the error it is, read within the size cap. */
async function answer(ctx: RequestContext, call: Call, response: Dispatcher.ResponseData): Promise<Attempt> {
  const status = response.statusCode;
  const declared = Number(response.headers['content-length']);
  const read = declared > ctx.maxResponseBytes ? { declared } : await readCapped(response.body, ctx.maxResponseBytes);
  if (!('text' in read)) {
    response.body.destroy();
    const size = 'declared' in read ? `${read.declared} bytes` : `more than ${ctx.maxResponseBytes} bytes`;
    return {
      error: new ApiError({
        code: 'response_too_large',
        status,
        resource: call.resource,
        retryable: false,
        message: `${call.resource}: response_too_large (HTTP ${status}): ${call.method} ${call.path} sent ${size}, over the ${ctx.maxResponseBytes / MB} MB limit (EDGEWATCH_MAX_RESPONSE_MB)`,
      }),
    };
  }
  const ok = status >= 200 && status < 300;
  let body: unknown;
  try {
    body = read.text === '' ? undefined : JSON.parse(read.text);
  } catch {
    body = undefined;
    if (ok) return { error: invalidResponse(ctx, call.resource, status, `body is not JSON (HTTP ${status})`) };
  }
  const tooDeep = pathTooDeep(body);
  if (tooDeep !== undefined) {
    const where = describeTooDeep(body, tooDeep, call);
    return { error: invalidResponse(ctx, call.resource, status, `${where}: nested more than ${MAX_NESTING} levels deep`) };
  }
  if (ok) return { body };

  const { code, message } = parseErrorBody(body, ctx.secrets);
  const apiCode = code ?? `http_${status}`;
  const retryable = RETRYABLE_STATUSES.has(status) && apiCode !== 'insufficient_credits' && !call.paid;
  const retryAfterMs = parseRetryAfter(response.headers['retry-after'], ctx.maxBackoffMs);
  const error = new ApiError({
    code: apiCode,
    status,
    resource: call.resource,
    retryable,
    ...(message === undefined ? {} : { apiMessage: message }),
  });
  return retryAfterMs === undefined ? { error } : { error, retryAfterMs };
}

/** A request that got no complete answer: closed, timed out or a network error. */
function requestFailed(ctx: RequestContext, call: Call, err: unknown, status: number | undefined): ApiError {
  const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
  const errCode = errorCode(err);
  const notSent = errCode !== undefined && NOT_SENT_CODES.has(errCode);
  const code = ctx.closed ? 'client_closed' : timedOut ? 'timeout' : 'network_error';
  return new ApiError({
    code,
    resource: call.resource,
    retryable: !ctx.closed && (call.paid ? notSent : true),
    message: redact(timedOut ? `${call.resource}: timeout after ${call.timeoutMs ?? ctx.timeoutMs} ms` : `${call.resource}: ${code}: ${errorMessage(err)}`, ctx.secrets),
    cause: safeCause(err, ctx.secrets),
    ...(status === undefined ? {} : { status }),
  });
}

/** A body that is not what the API documents: `<resource>: <what>`, never retried. */
export function invalidResponse(ctx: RequestContext, resource: string, status: number | undefined, what: string): ApiError {
  return new ApiError({
    code: 'invalid_response',
    resource,
    retryable: false,
    message: redact(`${resource}: ${what}`, ctx.secrets),
    ...(status === undefined ? {} : { status }),
  });
}

/** A row as errors name it: by its key field, else by its index (`#3`). */
export function rowName(row: unknown, keyField: string, index: number): string {
  const key = typeof row === 'object' && row !== null ? (row as Record<string, unknown>)[keyField] : undefined;
  return typeof key === 'string' || typeof key === 'number' ? String(key) : `#${index}`;
}

/** Where in a body a value nests too deep: the row (for lists) and its top field. */
function describeTooDeep(body: unknown, path: Array<string | number>, call: Call | ListCall): string {
  const [first, index, field] = path;
  if ('rowKey' in call && first === 'data' && typeof index === 'number') {
    const row = (body as { data: unknown[] }).data[index];
    return `row ${rowName(row, call.rowKey, index)}: field ${String(field)}`;
  }
  return `field ${String(first)}`;
}

/**
 * The body as text, or the byte count at which it went over `limit`: reading stops there (the
 * connection is dropped) rather than holding a hostile body whole.
 */
async function readCapped(body: AsyncIterable<Buffer> & { destroy(): unknown }, limit: number): Promise<{ text: string } | { over: number }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > limit) {
      body.destroy();
      return { over: size };
    }
    chunks.push(chunk);
  }
  return { text: Buffer.concat(chunks, size).toString('utf8') };
}

function queryString(query: Query | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value));
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}
