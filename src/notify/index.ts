export { deliverDue, nextAttemptDelay, rowToAlert, DEFAULT_RETRY } from './outbox.ts';
export type { DeliverOptions, DeliverReport, OutgoingMessage, RetryPolicy, SendToChannel } from './outbox.ts';
export { closeDueBatches, digestDueAt, openBatches } from './digests.ts';
export type { PendingBatch } from './digests.ts';
export * from './channels/index.ts';
