// The research API client: undici over one keep-alive Agent, bounded concurrency, per-request
// timeout, retries with exponential backoff and full jitter, every response parsed by zod. What a
// hostile upstream can send is bounded: body size, pages per list walk and the walk's duration.
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request, type Dispatcher } from 'undici';
import type { z } from 'zod';
import { ApiError, describeIssue, parseErrorBody, safeCause } from './errors.ts';
import { marketSearchMethods, type MarketSearchMethods } from './market-search.ts';
import { formatDuration } from '../core/duration.ts';
import { redact } from '../core/redact.ts';
import { MAX_NESTING, pathTooDeep } from './nesting.ts';
import { parseRetryAfter } from '../core/retry-after.ts';
import { RETRYABLE_STATUSES, backoffDelay } from './retry.ts';
import { createSemaphore } from './semaphore.ts';
import {
  EventDetail,
  EventHistoryEnvelope,
  EventRow,
  GenerationAccepted,
  HistorySnapshot,
  KpiBoardEnvelope,
  KpiDetail,
  KpiRow,
  PageEnvelope,
  ReportRetrieval,
  RunStatus,
  TrustScorecard,
} from './schemas.ts';

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

export interface ApiClientOptions {
  /** API root including `/v1`. */
  baseUrl: string;
  apiKey?: string;
  /** Per attempt, from sending to the end of the body. Default 15000. */
  timeoutMs?: number;
  /** Requests in flight across all calls. Default 8. */
  maxConcurrency?: number;
  /** Retries after the first attempt. Default 4. */
  retries?: number;
  backoffBaseMs?: number;
  maxBackoffMs?: number;
  /** Pages one walk of a list (one poll) may read; more fails the walk. Default 2000. */
  maxPages?: number;
  /** How long one walk of a list may take, checked before each page. Default 10 minutes. */
  maxListMs?: number;
  /** Largest response body read, in bytes; a larger one fails the request without retry. Default 32 MB. */
  maxResponseBytes?: number;
  /** Used instead of the client's own Agent; the caller then owns (and closes) it. */
  dispatcher?: Dispatcher;
  /** Called after every attempt, e.g. for metrics. Never receives the key. */
  onRequest?: (info: RequestInfo) => void;
}

export interface Page<T> {
  rows: T[];
  nextCursor: string | null;
  hasMore: boolean;
}

export interface HistoryPage extends Page<HistorySnapshot> {
  eventTicker: string | undefined;
}

export interface KpiPage extends Page<KpiRow> {
  /** The board's `as_of`. */
  asOf: string | null;
  aggregates: KpiBoardEnvelope['aggregates'];
}

export type Venue = 'venuea' | 'venueb';

export interface EventPagesParams {
  /** Page size, 1-200; default 200 (fewest requests for a full poll). */
  limit?: number;
  /** Default true: rules filter on eligibility_status. */
  includeEligibility?: boolean;
  hasHistory?: boolean;
  cursor?: string;
}

export interface EventHistoryParams {
  limit?: number;
  cursor?: string;
  capturedFrom?: string;
  capturedTo?: string;
  includeAnalysis?: boolean;
  days?: number;
  excludeEmptyModel?: boolean;
}

export interface KpiPagesParams {
  status?: 'all' | 'active' | 'settled' | 'reported';
  sort?: string;
  q?: string;
  period?: string;
  /** Page size, 1-200; default 200. */
  limit?: number;
  cursor?: string;
}

export interface KpiDetailParams {
  includeHistory?: boolean;
  selectedEstimateId?: string;
  startTs?: number;
  endTs?: number;
  periodInterval?: number;
  percentiles?: number[];
}

export interface ApiClient extends MarketSearchMethods {
  eventPages(params?: EventPagesParams): AsyncIterable<Page<EventRow>>;
  event(ticker: string, params?: { runId?: string }): Promise<EventDetail>;
  eventHistoryPages(ticker: string, params?: EventHistoryParams): AsyncIterable<HistoryPage>;
  report(venue: Venue, key: string, params?: { version?: string }): Promise<ReportRetrieval>;
  trust(venue: Venue, key: string, params?: { version?: string; expand?: Array<'integrity' | 'trade_quality'> }): Promise<TrustScorecard>;
  /** Starts a paid (3 credits) generation; never retried once the request may have been sent. */
  startGeneration(venue: Venue, key: string): Promise<GenerationAccepted>;
  runStatus(runId: string): Promise<RunStatus>;
  kpiPages(params?: KpiPagesParams): AsyncIterable<KpiPage>;
  kpi(eventId: string, params?: KpiDetailParams): Promise<KpiDetail>;
  close(): Promise<void>;
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
}

/** A call whose body holds rows under `data`, each named in errors by its `rowKey` field. */
export interface ListCall extends Call {
  rowKey: string;
}

/** What the method modules (market-search.ts) build on: one request, list walks, body checks. */
export interface ClientCore {
  /** The parsed JSON body of a 2xx, after retries; an ApiError otherwise. */
  send(call: Call): Promise<unknown>;
  paginate<E extends PageEnvelope, P extends Page<unknown>>(call: Call, envelope: z.ZodType<E>, read: (env: E) => P): AsyncGenerator<P, void, undefined>;
  parseOne<S extends z.ZodType>(schema: S, body: unknown, resource: string): z.output<S>;
  /** Rows validated one at a time so an error names the row by its key field. */
  parseRows<S extends z.ZodType>(schema: S, rows: unknown[], call: ListCall): Array<z.output<S>>;
}

const DEFAULT_PAGE = 200;
const MB = 1024 * 1024;
export const DEFAULT_MAX_RESPONSE_BYTES = 32 * MB;
export const DEFAULT_MAX_PAGES = 2000;
/** A walk of a list that pages slowly ends too: at 2000 pages, one page every 300 ms. */
export const DEFAULT_MAX_LIST_MS = 10 * 60_000;

// Errors raised before any byte left: retrying cannot charge twice.
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'EHOSTUNREACH', 'ENETUNREACH']);

const seg = encodeURIComponent;

/** A row as errors name it: by its key field, else by its index (`#3`). */
function rowName(row: unknown, keyField: string, index: number): string {
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

export function createApiClient(options: ApiClientOptions): ApiClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const apiKey = options.apiKey;
  const secrets = [apiKey];
  const timeoutMs = options.timeoutMs ?? 15_000;
  const retries = options.retries ?? 4;
  const backoffBaseMs = options.backoffBaseMs ?? 500;
  const maxBackoffMs = options.maxBackoffMs ?? 30_000;
  const maxConcurrency = options.maxConcurrency ?? 8;
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const maxPages = options.maxPages ?? DEFAULT_MAX_PAGES;
  const maxListMs = options.maxListMs ?? DEFAULT_MAX_LIST_MS;
  const ownAgent = options.dispatcher ? undefined : new Agent({ connections: maxConcurrency, keepAliveTimeout: 30_000 });
  const dispatcher: Dispatcher = options.dispatcher ?? ownAgent!;
  const semaphore = createSemaphore(maxConcurrency);
  const onRequest = options.onRequest;
  let closed = false;

  const headers: Record<string, string> = { accept: 'application/json' };
  if (apiKey !== undefined) headers['authorization'] = `Bearer ${apiKey}`;

  /** One attempt: the parsed JSON body of a 2xx, or the ApiError it came to with retry hints. */
  async function attempt(call: Call, attemptNo: number): Promise<{ body: unknown } | { error: ApiError; retryAfterMs?: number }> {
    const release = await semaphore.acquire();
    const started = performance.now();
    let status: number | undefined;
    try {
      const response = await request(`${baseUrl}${call.path}${queryString(call.query)}`, {
        method: call.method,
        dispatcher,
        headers: call.body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
        body: call.body === undefined ? undefined : JSON.stringify(call.body),
        signal: AbortSignal.timeout(timeoutMs),
      });
      status = response.statusCode;
      const declared = Number(response.headers['content-length']);
      const read = declared > maxResponseBytes ? { declared } : await readCapped(response.body, maxResponseBytes);
      if (!('text' in read)) {
        response.body.destroy();
        const size = 'declared' in read ? `${read.declared} bytes` : `more than ${maxResponseBytes} bytes`;
        return {
          error: new ApiError({
            code: 'response_too_large',
            status,
            resource: call.resource,
            retryable: false,
            message: `${call.resource}: response_too_large (HTTP ${status}): ${call.method} ${call.path} sent ${size}, over the ${maxResponseBytes / MB} MB limit (EDGEWATCH_MAX_RESPONSE_MB)`,
          }),
        };
      }
      const text = read.text;
      let body: unknown;
      try {
        body = text === '' ? undefined : JSON.parse(text);
      } catch {
        body = undefined;
        if (status >= 200 && status < 300) return { error: invalidResponse(call.resource, status, `body is not JSON (HTTP ${status})`) };
      }
      const tooDeep = pathTooDeep(body);
      if (tooDeep !== undefined) {
        const where = describeTooDeep(body, tooDeep, call);
        return { error: invalidResponse(call.resource, status, `${where}: nested more than ${MAX_NESTING} levels deep`) };
      }
      if (status >= 200 && status < 300) return { body };

      const { code, message } = parseErrorBody(body, secrets);
      const errorCode = code ?? `http_${status}`;
      const retryable = RETRYABLE_STATUSES.has(status) && errorCode !== 'insufficient_credits' && !call.paid;
      const retryAfterHeader = response.headers['retry-after'];
      const retryAfterMs = parseRetryAfter(retryAfterHeader, maxBackoffMs);
      const error = new ApiError({
        code: errorCode,
        status,
        resource: call.resource,
        retryable,
        ...(message === undefined ? {} : { apiMessage: message }),
      });
      return retryAfterMs === undefined ? { error } : { error, retryAfterMs };
    } catch (err) {
      const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
      const errCode = (err as { code?: unknown }).code;
      const notSent = typeof errCode === 'string' && NOT_SENT_CODES.has(errCode);
      const code = closed ? 'client_closed' : timedOut ? 'timeout' : 'network_error';
      return {
        error: new ApiError({
          code,
          resource: call.resource,
          retryable: !closed && (call.paid ? notSent : true),
          message: redact(
            timedOut
              ? `${call.resource}: timeout after ${timeoutMs} ms`
              : `${call.resource}: ${code}: ${err instanceof Error ? err.message : String(err)}`,
            secrets,
          ),
          cause: safeCause(err, secrets),
          ...(status === undefined ? {} : { status }),
        }),
      };
    } finally {
      release();
      try {
        onRequest?.({ method: call.method, path: call.path, status, durationMs: performance.now() - started, attempt: attemptNo });
      } catch {
        // A metrics hook must never fail a request.
      }
    }
  }

  async function send(call: Call): Promise<unknown> {
    for (let attemptNo = 1; ; attemptNo += 1) {
      if (closed) throw new ApiError({ code: 'client_closed', resource: call.resource, retryable: false });
      const outcome = await attempt(call, attemptNo);
      if ('body' in outcome) return outcome.body;
      if (!outcome.error.retryable || attemptNo > retries) throw outcome.error;
      await sleep(outcome.retryAfterMs ?? backoffDelay(attemptNo - 1, backoffBaseMs, maxBackoffMs));
    }
  }

  /** A body that is not what the API documents: `<resource>: <what>`, never retried. */
  function invalidResponse(resource: string, status: number | undefined, what: string): ApiError {
    return new ApiError({
      code: 'invalid_response',
      resource,
      retryable: false,
      message: redact(`${resource}: ${what}`, secrets),
      ...(status === undefined ? {} : { status }),
    });
  }

  function parseOne<S extends z.ZodType>(schema: S, body: unknown, resource: string): z.output<S> {
    const result = schema.safeParse(body);
    if (!result.success) throw invalidResponse(resource, undefined, describeIssue(result.error));
    return result.data;
  }

  /** Rows validated one at a time so an error names the row by its key field. */
  function parseRows<S extends z.ZodType>(schema: S, rows: unknown[], call: ListCall): Array<z.output<S>> {
    const out: Array<z.output<S>> = new Array(rows.length);
    for (let i = 0; i < rows.length; i += 1) {
      const row = rows[i];
      const result = schema.safeParse(row);
      if (!result.success) throw invalidResponse(call.resource, undefined, `row ${rowName(row, call.rowKey, i)}: ${describeIssue(result.error)}`);
      out[i] = result.data;
    }
    return out;
  }

  /**
   * Walks a cursor-paginated list, one request per page. `read` turns a raw envelope into the
   * page handed out; the loop stops on has_more false (or when the consumer breaks). A list whose
   * pages never end (fresh cursors forever, or slowly) fails at maxPages or maxListMs.
   */
  async function* paginate<E extends PageEnvelope, P extends Page<unknown>>(
    call: Call,
    envelope: z.ZodType<E>,
    read: (env: E) => P,
  ): AsyncGenerator<P, void, undefined> {
    let cursor = call.query?.['cursor'] as string | undefined;
    const seen = new Set<string>();
    const started = Date.now();
    const limitReached = (code: 'page_limit' | 'time_limit', why: string) =>
      new ApiError({ code, resource: call.resource, retryable: false, message: `${call.resource}: ${code}: ${why}` });
    for (let pages = 1; ; pages += 1) {
      const body = await send({ ...call, query: { ...call.query, cursor } });
      const env = parseOne(envelope, body, call.resource);
      const page = read(env);
      yield page;
      if (!page.hasMore) return;
      if (page.nextCursor === null || seen.has(page.nextCursor)) {
        throw new ApiError({
          code: 'invalid_response',
          resource: call.resource,
          retryable: false,
          message: `${call.resource}: has_more is true but next_cursor is ${page.nextCursor === null ? 'null' : 'repeated'}`,
        });
      }
      if (pages >= maxPages) {
        throw limitReached('page_limit', `${pages} pages read and has_more is still true; EDGEWATCH_MAX_PAGES (${maxPages}) caps the pages one poll reads from one list`);
      }
      if (Date.now() - started > maxListMs) {
        const limit = formatDuration(maxListMs);
        throw limitReached('time_limit', `still paging after ${limit} (${pages} pages); one poll reads one list for at most ${limit}`);
      }
      seen.add(page.nextCursor);
      cursor = page.nextCursor;
    }
  }

  const venuePath = (venue: Venue, key: string): string => `/predictions/reports/${seg(venue)}/${seg(key)}`;

  return {
    eventPages(params = {}) {
      const call: ListCall = {
        method: 'GET',
        path: '/predictions/events',
        resource: 'events list',
        rowKey: 'event_ticker',
        query: {
          limit: params.limit ?? DEFAULT_PAGE,
          include: params.includeEligibility === false ? undefined : 'eligibility',
          has_history: params.hasHistory,
          cursor: params.cursor,
        },
      };
      return paginate(call, PageEnvelope, (env) => ({
        rows: parseRows(EventRow, env.data, call),
        nextCursor: env.next_cursor,
        hasMore: env.has_more,
      }));
    },

    async event(ticker, params = {}) {
      const resource = `event ${ticker}`;
      const body = await send({ method: 'GET', path: `/predictions/events/${seg(ticker)}`, query: { run_id: params.runId }, resource });
      return parseOne(EventDetail, body, resource);
    },

    eventHistoryPages(ticker, params = {}) {
      const call: ListCall = {
        method: 'GET',
        path: `/predictions/events/${seg(ticker)}/history`,
        resource: `event history ${ticker}`,
        rowKey: 'history_id',
        query: {
          limit: params.limit ?? DEFAULT_PAGE,
          cursor: params.cursor,
          captured_from: params.capturedFrom,
          captured_to: params.capturedTo,
          include: params.includeAnalysis ? 'analysis' : undefined,
          days: params.days,
          exclude_empty_model: params.excludeEmptyModel,
        },
      };
      return paginate(call, EventHistoryEnvelope, (env) => ({
        rows: parseRows(HistorySnapshot, env.data, call),
        nextCursor: env.next_cursor,
        hasMore: env.has_more,
        eventTicker: env.event_ticker,
      }));
    },

    async report(venue, key, params = {}) {
      const resource = `report ${venue}/${key}`;
      const body = await send({ method: 'GET', path: venuePath(venue, key), query: { version: params.version }, resource });
      return parseOne(ReportRetrieval, body, resource);
    },

    async trust(venue, key, params = {}) {
      const resource = `trust ${venue}/${key}`;
      const query = { version: params.version, expand: params.expand?.length ? params.expand.join(',') : undefined };
      const body = await send({ method: 'GET', path: `${venuePath(venue, key)}/trust`, query, resource });
      return parseOne(TrustScorecard, body, resource);
    },

    async startGeneration(venue, key) {
      const resource = `generation ${venue}/${key}`;
      const body = await send({ method: 'POST', path: venuePath(venue, key), resource, paid: true });
      return parseOne(GenerationAccepted, body, resource);
    },

    async runStatus(runId) {
      const resource = `run ${runId}`;
      const body = await send({ method: 'GET', path: `/predictions/reports/status/${seg(runId)}`, resource });
      return parseOne(RunStatus, body, resource);
    },

    kpiPages(params = {}) {
      const call: ListCall = {
        method: 'GET',
        path: '/predictions/kpi-events',
        resource: 'kpi board',
        rowKey: 'id',
        query: {
          status: params.status,
          sort: params.sort,
          q: params.q,
          period: params.period,
          limit: params.limit ?? DEFAULT_PAGE,
          cursor: params.cursor,
        },
      };
      return paginate(call, KpiBoardEnvelope, (env) => ({
        rows: parseRows(KpiRow, env.data, call),
        nextCursor: env.next_cursor,
        hasMore: env.has_more,
        asOf: env.as_of,
        aggregates: env.aggregates,
      }));
    },

    async kpi(eventId, params = {}) {
      const resource = `kpi ${eventId}`;
      const query: Query = {
        include_history: params.includeHistory,
        selected_estimate_id: params.selectedEstimateId,
        start_ts: params.startTs,
        end_ts: params.endTs,
        period_interval: params.periodInterval,
        percentiles: params.percentiles?.join(','),
      };
      const body = await send({ method: 'GET', path: `/predictions/kpi-events/${seg(eventId)}`, query, resource });
      return parseOne(KpiDetail, body, resource);
    },

    ...marketSearchMethods({ send, paginate, parseOne, parseRows }),

    async close() {
      closed = true;
      await ownAgent?.close();
    },
  };
}
