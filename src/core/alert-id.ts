import { createHash } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * The alert id: derived from what caused the alert, so that re-polling, restarting or crashing
 * and polling again yields the same id (the idempotency key of every delivery). 26 characters
 * of Crockford base32, shaped like a ULID.
 */
export function alertId(causeKey: string): string {
  const digest = createHash('sha256').update(causeKey).digest();
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of digest) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.length < 26) {
      out += CROCKFORD[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
    if (out.length === 26) break;
  }
  return out;
}

/** What caused an alert: one rule, one entity, one snapshot transition (the entity's new seq). */
export function causeKey(rule: string, source: string, entity: string, seq: number): string {
  return [rule, source, entity, seq].join('\u0000');
}

/** What caused a time-driven alert: an `overdue` rule's due date for one entity. */
export function dueCauseKey(rule: string, source: string, entity: string, due: string): string {
  return [rule, source, entity, 'overdue', due].join('\u0000');
}

/** A resolution's id: one per alert. */
export function resolutionId(alertId: string): string {
  return alertIdOf(`resolved\u0000${alertId}`);
}

/** A notice's id from what caused it (a source's health change). */
export function noticeId(cause: string): string {
  return alertIdOf(`notice\u0000${cause}`);
}

const alertIdOf = (cause: string): string => alertId(cause);
