// What the pollers need from the research API, declared here by the code that uses it.
import type { Alert, SourceName } from '../core/types.ts';
import type { Rule } from '../rules/index.ts';
import type { Store } from '../store/index.ts';

export interface Page<T> {
  rows: T[];
}

type Row = Record<string, unknown>;

export interface ResearchApi {
  eventPages(params?: { limit?: number; includeEligibility?: boolean }): AsyncIterable<Page<Row & { event_ticker: string; captured_at: string; edge_pp: number | null }>>;
  event(ticker: string): Promise<Row & { venue: string; slug?: string | null; event_ticker: string }>;
  trust(venue: string, key: string): Promise<Row & { run_id: string; title?: string | null; trust_index: { score: number; label: string } }>;
  report(venue: string, key: string): Promise<Row & { title?: string | null; name?: string | null; trust_label?: string | null; trust_score?: number | null }>;
  runStatus(runId: string): Promise<Row & { run_id: string; status: string; venue: string; event_ticker?: string | null; requested_url?: string | null }>;
  startGeneration(venue: string, key: string): Promise<Row & { run_id: string; status: string; event_ticker: string; venue: string }>;
  kpiPages(params?: { status?: 'all' | 'active' | 'settled' | 'reported'; limit?: number }): AsyncIterable<Page<Row & { id: string }>>;
  kpi(eventId: string): Promise<Row>;
}

export interface PollContext {
  store: Store;
  api: ResearchApi;
  /** The rules of the source being polled. */
  rules: readonly Rule[];
  now: () => Date;
  dryRun: boolean;
  /** reports: trust requests allowed per poll. */
  reportsBudget: number;
}

export interface PollResult {
  source: SourceName;
  alerts: Alert[];
  /** Entities whose snapshot changed (or appeared). */
  changed: number;
  /** Nothing to poll (reports with no rule, runs with none processing). */
  skipped?: boolean;
  /** The source's first poll: it stored what it saw and fired nothing. */
  baseline?: boolean;
}

/** The API's code of a thrown ApiError (or any error with a `code`), without depending on the class. */
export function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** The HTTP status of a thrown ApiError (or any error with a numeric `status`). */
export function errorStatus(error: unknown): number | undefined {
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === 'number' ? status : undefined;
}

/** The call's result, or undefined when the API answers 404: it does not know the thing (any more). */
export async function unlessNotFound<T>(call: Promise<T>): Promise<T | undefined> {
  try {
    return await call;
  } catch (error) {
    if (errorStatus(error) === 404) return undefined;
    throw error;
  }
}
