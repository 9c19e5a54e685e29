// Digest batches. An alert of a rule with `digest` waits in its (rule, channel) batch; the batch is
// closed when its time comes (the next cron time after its first alert, or its window after it),
// stored as a digest, and delivered by the outbox like an alert.
import { CronExpressionParser } from 'cron-parser';
import { alertId } from '../core/alert-id.ts';
import type { Digest, Rule } from '../rules/index.ts';
import { closeDigestBatch, openDigestBatches, type OpenBatch, type Store } from '../store/index.ts';

/** When a batch opened at `openedAt` is due. */
export function digestDueAt(digest: Digest, openedAt: Date): Date {
  if (digest.windowMs !== undefined) return new Date(openedAt.getTime() + digest.windowMs);
  const cron = CronExpressionParser.parse(digest.cron ?? '0 * * * *', {
    currentDate: openedAt,
    ...(digest.timezone ? { tz: digest.timezone } : {}),
  });
  return cron.next().toDate();
}

interface PendingBatch extends OpenBatch {
  dueAt: string;
}

/** The open batches, each with when it is due and how many alerts wait in it. */
async function openBatches(store: Store, rules: ReadonlyMap<string, Rule>): Promise<PendingBatch[]> {
  return (await openDigestBatches(store)).map((batch) => {
    const digest = rules.get(batch.rule)?.digest;
    // A rule that lost its digest (or was removed) sends what waits at once rather than lose it.
    const due = digest ? digestDueAt(digest, new Date(batch.openedAt)) : new Date(batch.openedAt);
    return { ...batch, dueAt: due.toISOString() };
  });
}

/** Closes every batch whose time has come (all of them with `flush`); returns how many. */
export async function closeDueBatches(store: Store, rules: ReadonlyMap<string, Rule>, now: Date, options: { flush?: boolean } = {}): Promise<number> {
  const nowIso = now.toISOString();
  let closed = 0;
  for (const batch of await openBatches(store, rules)) {
    if (!options.flush && batch.dueAt > nowIso) continue;
    // Derived from the batch's first delivery: the same id on every retry of the digest.
    const id = alertId(`digest\u0000${batch.rule}\u0000${batch.channel}\u0000${batch.firstId}`);
    await closeDigestBatch(store, batch, id, now);
    closed++;
  }
  return closed;
}
