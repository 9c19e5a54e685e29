import type { DeliveryOutcome } from '../../core/types.ts';

export const delivered: DeliveryOutcome = { ok: true };

export function failed(retryable: boolean, error: string, retryAfterMs?: number): DeliveryOutcome {
  return retryAfterMs !== undefined ? { ok: false, retryable, error, retryAfterMs } : { ok: false, retryable, error };
}

/** Removes every secret (and its URL-encoded form) from a string that may be logged or stored. */
export function redact(text: string, secrets: Array<string | undefined>): string {
  let out = text;
  for (const secret of secrets) {
    if (secret === undefined || secret.length < 3) continue;
    for (const form of new Set([secret, encodeURIComponent(secret)])) out = out.split(form).join('[redacted]');
  }
  return out;
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
