// API values in words for the page: a delivery's status, a source's state.
import type { DeliveryJson, RuleJson, SourceJson } from '../src/service/api-types.ts';

/** `screen: delivered`, `ops: retrying (2 attempts so far)`, `me: waiting for the 18:00 UTC digest`. */
export function deliveryInWords(delivery: DeliveryJson, rule: RuleJson | undefined): string {
  const { channel, status, attempts } = delivery;
  const tries = `${attempts} attempt${attempts === 1 ? '' : 's'}`;
  switch (status) {
    case 'delivered':
      return `${channel}: delivered${attempts > 1 ? ` after ${tries}` : ''}`;
    case 'pending':
      return attempts === 0 ? `${channel}: sending` : `${channel}: retrying (${tries} so far)`;
    case 'dead':
      return `${channel}: failed after ${tries}`;
    case 'silenced':
      return `${channel}: silenced, not sent`;
    case 'inhibited':
      return `${channel}: inhibited, not sent`;
    case 'digest':
      return `${channel}: waiting for ${rule?.digest?.waiting_for ?? 'its digest'}`;
    default:
      return `${channel}: ${status}`;
  }
}

export const STATE_WORDS: Record<SourceJson['state'], string> = {
  ok: 'ok',
  failing: 'failing',
  stale: 'stale',
  idle: 'idle (nothing to check)',
  waiting: 'waiting for its first poll',
  standby: 'polled by another process',
};
