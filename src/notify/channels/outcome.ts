import type { DeliveryOutcome } from '../../core/types.ts';

export const delivered: DeliveryOutcome = { ok: true };

export function failed(retryable: boolean, error: string, retryAfterMs?: number): DeliveryOutcome {
  return retryAfterMs !== undefined ? { ok: false, retryable, error, retryAfterMs } : { ok: false, retryable, error };
}
