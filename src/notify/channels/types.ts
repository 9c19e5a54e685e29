import type { DeliveryOutcome } from '../../core/types.ts';

/** One channel adapter: sends one message; expected failures come back as outcomes, not throws. */
export interface Notifier<M> {
  send(message: M): Promise<DeliveryOutcome>;
}
