// Digest batches. An alert of a rule with `digest` waits in its (rule, channel) batch; the batch is
// closed when its time comes (the next cron time after its first alert, or its window after it),
// stored as a digest, and delivered by the outbox like an alert.
import { CronExpressionParser } from 'cron-parser';
import type { Digest, Rule } from '../core/types.ts';
import { alertId } from '../core/alert-id.ts';
import type { Store } from '../store/index.ts';

/** When a batch opened at `openedAt` is due. */
export function digestDueAt(digest: Digest, openedAt: Date): Date {
  if (digest.windowMs !== undefined) return new Date(openedAt.getTime() + digest.windowMs);
  const cron = CronExpressionParser.parse(digest.cron ?? '0 * * * *', {
    currentDate: openedAt,
    ...(digest.timezone ? { tz: digest.timezone } : {}),
  });
  return cron.next().toDate();
}

interface OpenBatch {
  rule: string;
  channel: string;
  opened_at: string;
  first_id: number;
}

export interface PendingBatch extends OpenBatch {
  due_at: string;
  size: number;
}

/** The open batches, each with when it is due and how many alerts wait in it. */
export function openBatches(store: Store, rules: ReadonlyMap<string, Rule>): PendingBatch[] {
  const rows = store.raw
    .prepare<[], OpenBatch & { size: number }>(
      `SELECT a.rule, d.channel, MIN(d.created_at) AS opened_at, MIN(d.id) AS first_id, COUNT(*) AS size
       FROM deliveries d JOIN alerts a ON a.id = d.alert_id
       WHERE d.status = 'digest' AND d.digest_id IS NULL
       GROUP BY a.rule, d.channel ORDER BY opened_at`,
    )
    .all();
  return rows.map((row) => {
    const digest = rules.get(row.rule)?.digest;
    // A rule that lost its digest (or was removed) sends what waits at once rather than lose it.
    const due = digest ? digestDueAt(digest, new Date(row.opened_at)) : new Date(row.opened_at);
    return { ...row, due_at: due.toISOString() };
  });
}

/** Closes every batch whose time has come (all of them with `flush`); returns how many. */
export function closeDueBatches(store: Store, rules: ReadonlyMap<string, Rule>, now: Date, options: { flush?: boolean } = {}): number {
  const nowIso = now.toISOString();
  const insert = store.raw.prepare<[string, string, string, string, string, string]>(
    `INSERT OR IGNORE INTO digests (id, rule, channel, status, opened_at, created_at, next_attempt_at)
     VALUES (?, ?, ?, 'pending', ?, ?, ?)`,
  );
  const assign = store.raw.prepare<[string, string, string]>(
    `UPDATE deliveries SET digest_id = ?
     WHERE status = 'digest' AND digest_id IS NULL AND channel = ?
       AND alert_id IN (SELECT id FROM alerts WHERE rule = ?)`,
  );
  let closed = 0;
  for (const batch of openBatches(store, rules)) {
    if (!options.flush && batch.due_at > nowIso) continue;
    // Derived from the batch's first delivery: the same id on every retry of the digest.
    const id = alertId(`digest\u0000${batch.rule}\u0000${batch.channel}\u0000${batch.first_id}`);
    store.raw.transaction(() => {
      insert.run(id, batch.rule, batch.channel, batch.opened_at, nowIso, nowIso);
      assign.run(id, batch.channel, batch.rule);
    })();
    closed++;
  }
  return closed;
}
