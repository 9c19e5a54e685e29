/**
 * Milliseconds to wait from an HTTP `Retry-After` value (seconds, or an HTTP date), at most
 * `maxMs`; undefined when absent or unreadable. Used for the research API and for webhooks.
 */
export function parseRetryAfter(value: string | string[] | undefined, maxMs = Number.POSITIVE_INFINITY, now: number = Date.now()): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (text === undefined || text === '') return undefined;
  let ms: number;
  if (/^\d+(\.\d+)?$/.test(text)) ms = Number(text) * 1000;
  else {
    const at = Date.parse(text);
    if (Number.isNaN(at)) return undefined;
    ms = at - now;
  }
  return Math.min(maxMs, Math.max(0, Math.ceil(ms)));
}
