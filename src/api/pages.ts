// Responses through their zod schemas, and cursor-paginated lists walked page by page. A list
// whose pages never end (fresh cursors forever, or slowly) fails at a page or time limit.
import type { z } from 'zod';
import { formatDuration } from '../core/duration.ts';
import { ApiError, describeIssue } from './errors.ts';
import { invalidResponse, rowName, send, type Call, type ListCall, type RequestContext } from './request.ts';
import type { PageEnvelope } from './schemas.ts';

export interface Page<T> {
  rows: T[];
  nextCursor: string | null;
  hasMore: boolean;
}

/** How far one walk of a list may go. */
export interface ListLimits {
  /** Pages one walk (one poll) may read. */
  maxPages: number;
  /** How long one walk may take, checked before each page. */
  maxListMs: number;
}

/** The response to `call`, parsed by `schema`. */
export async function fetchOne<S extends z.ZodType>(ctx: RequestContext, schema: S, call: Call): Promise<z.output<S>> {
  const result = schema.safeParse(await send(ctx, call));
  if (!result.success) throw invalidResponse(ctx, call.resource, undefined, describeIssue(result.error));
  return result.data;
}

/** Rows validated one at a time so an error names the row by its key field. */
export function parseRows<S extends z.ZodType>(ctx: RequestContext, schema: S, rows: unknown[], call: ListCall): Array<z.output<S>> {
  const out = new Array<z.output<S>>(rows.length);
  for (let i = 0; i < rows.length; i += 1) {
    const row = rows[i];
    const result = schema.safeParse(row);
    if (!result.success) throw invalidResponse(ctx, call.resource, undefined, `row ${rowName(row, call.rowKey, i)}: ${describeIssue(result.error)}`);
    out[i] = result.data;
  }
  return out;
}

/**
 * The pages of a list, its rows parsed by `row`; `more` adds what the envelope says besides
 * (the KPI board's `as_of`, a ranking's run).
 */
export function listPages<E extends PageEnvelope, S extends z.ZodType, X extends object>(
  ctx: RequestContext & ListLimits,
  call: ListCall,
  envelope: z.ZodType<E>,
  row: S,
  more: (env: E) => X,
): AsyncGenerator<Page<z.output<S>> & X, void, undefined> {
  return paginate(ctx, call, envelope, (env) => ({
    rows: parseRows(ctx, row, env.data, call),
    nextCursor: env.next_cursor,
    hasMore: env.has_more,
    ...more(env),
  }));
}

/**
 * Walks a cursor-paginated list, one request per page. `read` turns a raw envelope into the
 * page handed out; the loop stops on has_more false (or when the consumer breaks).
 */
async function* paginate<E extends PageEnvelope, P extends Page<unknown>>(
  ctx: RequestContext & ListLimits,
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
    const page = read(await fetchOne(ctx, envelope, { ...call, query: { ...call.query, cursor } }));
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
    if (pages >= ctx.maxPages) {
      throw limitReached('page_limit', `${pages} pages read and has_more is still true; EDGEWATCH_MAX_PAGES (${ctx.maxPages}) caps the pages one poll reads from one list`);
    }
    if (Date.now() - started > ctx.maxListMs) {
      const limit = formatDuration(ctx.maxListMs);
      throw limitReached('time_limit', `still paging after ${limit} (${pages} pages); one poll reads one list for at most ${limit}`);
    }
    seen.add(page.nextCursor);
    cursor = page.nextCursor;
  }
}
