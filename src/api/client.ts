// The research API client: undici over one keep-alive Agent, bounded concurrency, per-request
// timeout, retries with exponential backoff and full jitter, every response parsed by zod. What a
// hostile upstream can send is bounded: body size, pages per list walk and the walk's duration.
// Requests are made by request.ts, lists walked by pages.ts; here are the resources.
import { Agent, type Dispatcher } from 'undici';
import { marketSearchMethods, type MarketSearchMethods } from './market-search.ts';
import { createSemaphore } from './semaphore.ts';
import { fetchOne, listPages, type ListLimits, type Page } from './pages.ts';
import type { ListCall, Query, RequestContext, RequestInfo } from './request.ts';
import {
  AgentResponse,
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

export type { Page } from './pages.ts';
export type { RequestInfo } from './request.ts';

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
  /**
   * Asks a research agent (`POST /responses`, whole, not streamed): its answer's text and numbered
   * citations. One attempt within `timeoutMs` (a question may cost): never retried.
   */
  askAgent(params: AgentQuestion): Promise<AgentAnswer>;
  close(): Promise<void>;
}

export interface AgentQuestion {
  /** The agent's identifier (`svc-agent`). */
  agent: string;
  input: string;
  instructions?: string;
  timeoutMs?: number;
}

export interface AgentAnswer {
  text: string;
  citations: Array<{ order: number; name: string; url: string }>;
}

const DEFAULT_PAGE = 200;
const DEFAULT_CONCURRENCY = 8;
const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;
const DEFAULT_MAX_PAGES = 2000;
/** A walk of a list that pages slowly ends too: at 2000 pages, one page every 300 ms. */
const DEFAULT_MAX_LIST_MS = 10 * 60_000;

const seg = encodeURIComponent;
const venuePath = (venue: Venue, key: string): string => `/predictions/reports/${seg(venue)}/${seg(key)}`;

/** The settings, pool and limits every request of one client shares, defaults filled in. */
function clientContext(options: ApiClientOptions, dispatcher: Dispatcher): RequestContext & ListLimits {
  return {
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: options.apiKey === undefined ? { accept: 'application/json' } : { accept: 'application/json', authorization: `Bearer ${options.apiKey}` },
    secrets: [options.apiKey],
    timeoutMs: options.timeoutMs ?? 15_000,
    retries: options.retries ?? 4,
    backoffBaseMs: options.backoffBaseMs ?? 500,
    maxBackoffMs: options.maxBackoffMs ?? 30_000,
    maxResponseBytes: options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
    maxPages: options.maxPages ?? DEFAULT_MAX_PAGES,
    maxListMs: options.maxListMs ?? DEFAULT_MAX_LIST_MS,
    dispatcher,
    semaphore: createSemaphore(options.maxConcurrency ?? DEFAULT_CONCURRENCY),
    onRequest: options.onRequest,
    closed: false,
  };
}

export function createApiClient(options: ApiClientOptions): ApiClient {
  const ownAgent = options.dispatcher ? undefined : new Agent({ connections: options.maxConcurrency ?? DEFAULT_CONCURRENCY, keepAliveTimeout: 30_000 });
  const ctx = clientContext(options, options.dispatcher ?? ownAgent!);

  return {
    ...marketSearchMethods(ctx),

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
      return listPages(ctx, call, PageEnvelope, EventRow, () => ({}));
    },

    event(ticker, params = {}) {
      return fetchOne(ctx, EventDetail, { method: 'GET', path: `/predictions/events/${seg(ticker)}`, query: { run_id: params.runId }, resource: `event ${ticker}` });
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
      return listPages(ctx, call, EventHistoryEnvelope, HistorySnapshot, (env) => ({ eventTicker: env.event_ticker }));
    },

    report(venue, key, params = {}) {
      return fetchOne(ctx, ReportRetrieval, { method: 'GET', path: venuePath(venue, key), query: { version: params.version }, resource: `report ${venue}/${key}` });
    },

    trust(venue, key, params = {}) {
      const query = { version: params.version, expand: params.expand?.length ? params.expand.join(',') : undefined };
      return fetchOne(ctx, TrustScorecard, { method: 'GET', path: `${venuePath(venue, key)}/trust`, query, resource: `trust ${venue}/${key}` });
    },

    startGeneration(venue, key) {
      return fetchOne(ctx, GenerationAccepted, { method: 'POST', path: venuePath(venue, key), resource: `generation ${venue}/${key}`, paid: true });
    },

    runStatus(runId) {
      return fetchOne(ctx, RunStatus, { method: 'GET', path: `/predictions/reports/status/${seg(runId)}`, resource: `run ${runId}` });
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
      return listPages(ctx, call, KpiBoardEnvelope, KpiRow, (env) => ({ asOf: env.as_of, aggregates: env.aggregates }));
    },

    kpi(eventId, params = {}) {
      const query: Query = {
        include_history: params.includeHistory,
        selected_estimate_id: params.selectedEstimateId,
        start_ts: params.startTs,
        end_ts: params.endTs,
        period_interval: params.periodInterval,
        percentiles: params.percentiles?.join(','),
      };
      return fetchOne(ctx, KpiDetail, { method: 'GET', path: `/predictions/kpi-events/${seg(eventId)}`, query, resource: `kpi ${eventId}` });
    },

    async askAgent(params) {
      const response = await fetchOne(ctx, AgentResponse, {
        method: 'POST',
        path: '/responses',
        body: { model: params.agent, input: params.input, ...(params.instructions !== undefined ? { instructions: params.instructions } : {}) },
        resource: `agent ${params.agent}`,
        paid: true,
        ...(params.timeoutMs !== undefined ? { timeoutMs: params.timeoutMs } : {}),
      });
      const part = response.output[0]!.content[0]!;
      return { text: part.text, citations: part.annotations.map(({ order, name, url }) => ({ order, name, url })).sort((a, b) => a.order - b.order) };
    },

    async close() {
      ctx.closed = true;
      await ownAgent?.close();
    },
  };
}
