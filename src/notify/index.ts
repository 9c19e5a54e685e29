export { deliverDue, nextAttemptDelay, silenceUnsent, DEFAULT_RETRY } from './outbox.ts';
export type { DeliverOptions, DeliverReport, OutgoingMessage, RetryPolicy, SendToChannel } from './outbox.ts';
export { closeDueBatches, digestDueAt } from './digests.ts';
export * from './channels/index.ts';
