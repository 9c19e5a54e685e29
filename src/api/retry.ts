// Pure retry arithmetic for the API client: which statuses to retry, backoff with full jitter,
// and Retry-After parsing. `random` and `now` are parameters so the numbers can be tested.

/**
 * Statuses worth retrying. 500 is included: the API answers it for transient server faults,
 * and every call but generation is a safe GET (generation is never retried after sending).
 */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 500, 502, 503, 504]);

/** Full jitter: a uniform delay in [0, min(max, base * 2^retry)). `retry` counts from 0. */
export function backoffDelay(retry: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** retry);
  return Math.floor(random() * ceiling);
}
