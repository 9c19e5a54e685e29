// The sandbox's public contract, agreed with the API client: options, faults, test hooks.

export interface SandboxOptions {
  /** Default 1; the same seed gives the same data. */
  seed?: number;
  /** Number of events, default 60. */
  events?: number;
  /** Number of KPI rows, default 40. */
  kpis?: number;
  /** When set, only this Bearer key is accepted; when unset any Bearer key is; no header is always 401. */
  apiKey?: string;
  /** Simulated minutes per real second; 0 (default) moves the clock only through advance(). */
  speed?: number;
  /** Simulated start, default 2026-11-20T12:00:00Z. */
  startTime?: Date;
  /**
   * Continues an earlier world: with its seed and startTime, the world as it was at this simulated
   * time (replayed minute by minute from the start, so it is the same world).
   */
  resumeAt?: Date;
  /** Credits available for generation, default 30. */
  credits?: number;
}

export interface Fault {
  /** Prefix of the request path, e.g. '/v1/predictions/events' (query excluded). */
  path: string;
  /** Default: any method. */
  method?: string;
  /** How many matching requests get the fault, default 1. */
  count?: number;
  /** Answer with this status (body: the endpoint's documented error envelope unless `body` is given). */
  status?: number;
  /** Raw body to send, e.g. malformed JSON; a function makes one per request (e.g. pages that never end). */
  body?: string | ((request: SandboxRequest) => string);
  headers?: Record<string, string>;
  /** Wait this long before answering; with no status/body, then answer normally. */
  delayMs?: number;
}

export interface SandboxRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  /** The Bearer key it came with (tests give each client its own, to tell them apart). */
  key?: string;
  /** When it came (ms since epoch). */
  at?: number;
}

export interface SandboxWorld {
  eventTickers(): string[];
  /** A new snapshot: new history_id, captured_at = now(), fields patched; it becomes the newest in the list. */
  updateEvent(ticker: string, patch: Record<string, unknown>): void;
  /** A new event captured now; returns its ticker. */
  addEvent(patch?: Record<string, unknown>): string;
  eventVenue(ticker: string): 'venuea' | 'venueb';
  /** The key used in report paths: the ticker for venuea, the slug for venueb. */
  eventKey(ticker: string): string;
  /** null: no report (trust 404 report_not_found); otherwise a new report version with that label/score. */
  setTrust(ticker: string, trust: { label: string; score: number } | null): void;
  kpiIds(): string[];
  /** Patches board-row fields. */
  updateKpi(id: string, patch: Record<string, unknown>): void;
  /** status -> settled, actual null. */
  settleKpi(id: string): void;
  /** actual, actual_source and reported_at set; the detail's analysis.surprise filled. */
  landActual(id: string, value: number): void;
  /** completed adds a report version for that event; failed refunds 3 credits. */
  finishRun(runId: string, status: 'completed' | 'failed'): void;
  credits(): number;
  /**
   * The market-search data refreshes now, without its sync (it otherwise refreshes every 30
   * simulated minutes): changes made so far show in markets, edge, rankings and baskets.
   */
  refreshMarkets(): void;
  /** The market tickers of the market-search data as of its last refresh. */
  marketTickers(): string[];
}

export interface Sandbox {
  /** 'http://127.0.0.1:<port>/v1' */
  readonly url: string;
  readonly port: number;
  /** With startTime and now(), what it takes to continue this world later (resumeAt). */
  readonly seed: number;
  readonly startTime: Date;
  /** The simulated clock. */
  now(): Date;
  /** Moves the clock; the world evolves once per simulated minute crossed. */
  advance(minutes: number): void;
  inject(fault: Fault): void;
  clearFaults(): void;
  /** Every request received, in order; tests clear it with `requests.length = 0`. */
  readonly requests: SandboxRequest[];
  /**
   * The most clients (told apart by their Bearer key) that had requests under `path` in flight at
   * once, since the start: 1 when only one process at a time polls the list at `path`.
   */
  concurrentPollers(path: string): number;
  readonly world: SandboxWorld;
  close(): Promise<void>;
}
