// Request parsing and refusals shared by the route modules: the two error envelopes, query
// parameters, JSON bodies, base64 JSON cursors.
import type { z } from 'zod';
import type { SimWorld } from './world.ts';

export type Family = 'error' | 'detail';

export interface Reply {
  status: number;
  body: unknown;
  /** When set, the reply is a stream of server-sent events instead of one JSON body. */
  events?: ServerSentEvent[];
}

export interface ServerSentEvent {
  event: string;
  data: unknown;
}

export interface RouteRequest {
  method: string;
  /** Path below /v1, e.g. '/predictions/events'. */
  path: string;
  query: Record<string, string>;
  body: string;
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  409: 'conflict_error',
  429: 'rate_limit_error',
};

const STATUS_CODES: Record<number, string> = {
  400: 'invalid_value',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  422: 'validation_error',
  429: 'rate_limited',
  500: 'internal_error',
  502: 'bad_gateway',
  503: 'service_unavailable',
  504: 'gateway_timeout',
};

/** The documented error envelope of an endpoint family. */
export function errorBody(family: Family, status: number, message: string, code = STATUS_CODES[status] ?? 'error', param: string | null = null): unknown {
  return family === 'detail'
    ? { detail: message }
    : { error: { message, type: ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error'), param, code } };
}

/** Which envelope a path's errors use: reports and events carry `{error}`, the others `{detail}`. */
export function familyOf(path: string): Family {
  return /^\/(predictions\/(events|reports)|prediction-markets\/events)(\/|$)/.test(path) ? 'error' : 'detail';
}

export class Refusal {
  constructor(readonly reply: Reply) {}
}

export function refuse(family: Family, status: number, message: string, code?: string, param?: string): never {
  // A reply carried up to the route's handler, not a failure: no stack to capture.
  // eslint-disable-next-line @typescript-eslint/only-throw-error
  throw new Refusal({ status, body: errorBody(family, status, message, code, param ?? null) });
}

export function allowOnly(family: Family, query: Record<string, string>, allowed: readonly string[]): void {
  for (const name of Object.keys(query)) {
    if (!allowed.includes(name)) refuse(family, 400, `Unknown query parameter: ${name}`, 'invalid_value', name);
  }
}

export function intParam(family: Family, query: Record<string, string>, name: string, fallback: number, min: number, max: number, status = 400): number {
  const text = query[name];
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!/^-?\d+$/.test(text) || value < min || value > max) {
    refuse(family, status, `${name} must be an integer between ${min} and ${max}`, 'invalid_value', name);
  }
  return value;
}

export function boolParam(family: Family, query: Record<string, string>, name: string): boolean | undefined {
  const text = query[name];
  if (text === undefined) return undefined;
  if (text === 'true' || text === '1') return true;
  if (text === 'false' || text === '0') return false;
  return refuse(family, 400, `${name} must be a boolean`, 'invalid_value', name);
}

export function numberParam(family: Family, query: Record<string, string>, name: string): number | undefined {
  const text = query[name];
  if (text === undefined) return undefined;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value)) refuse(family, 422, `${name} must be a number`, 'invalid_value', name);
  return value;
}

export function timeParam(family: Family, query: Record<string, string>, name: string, status = 400): number | undefined {
  const text = query[name];
  if (text === undefined) return undefined;
  const value = Date.parse(text);
  if (Number.isNaN(value)) refuse(family, status, `${name} must be an ISO 8601 time`, 'invalid_value', name);
  return value;
}

export function encodeCursor(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64');
}

export function decodeCursor(family: Family, text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(text, 'base64').toString('utf8'));
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // fall through to the refusal
  }
  return refuse(family, 400, 'cursor is not valid', 'invalid_value', 'cursor');
}

export function offsetCursor(family: Family, text: string | undefined): number {
  const c = decodeCursor(family, text);
  if (!c) return 0;
  if (typeof c.offset !== 'number' || !Number.isInteger(c.offset) || c.offset < 0) refuse(family, 400, 'cursor is not valid', 'invalid_value', 'cursor');
  return c.offset;
}

/** A JSON request body checked by a schema: 422 naming the first fields that are wrong. */
export function jsonBody<S extends z.ZodType>(family: Family, body: string, schema: S): z.output<S> {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    refuse(family, 422, 'body is not valid JSON');
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) refuse(family, 422, parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '));
  return parsed.data;
}

export type Handler = (world: SimWorld, req: RouteRequest, params: string[]) => Reply;

export interface Route {
  method: string;
  pattern: RegExp;
  handler: Handler;
}
