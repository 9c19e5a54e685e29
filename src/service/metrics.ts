// Prometheus metrics of the daemon, in a Registry of its own (not prom-client's global one), so
// several daemons in one process (tests) never share counters.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { RequestInfo } from '../api/index.ts';
import type { SourceName } from '../core/types.ts';
import type { DatabaseStatus } from './health.ts';

export interface MetricsOptions {
  /** Each source's role in this process: `leader` (it polls it) or `standby` (another process sharing the database does). */
  roles: () => ReadonlyMap<SourceName, 'leader' | 'standby'>;
  database: () => DatabaseStatus;
  /** Pending deliveries and digests, read at scrape time. */
  outboxDepth: () => Promise<number>;
  /** Open digest batches (alerts waiting for their digest's time), read at scrape time. */
  digestBatchesPending: () => Promise<number>;
}

export interface Metrics {
  registry: Registry;
  pollDone(source: SourceName, ok: boolean, durationMs: number): void;
  apiRequest(info: RequestInfo): void;
  alertFired(rule: string): void;
  delivery(channel: string, outcome: 'delivered' | 'retrying' | 'dead', count: number, durationMs: number): void;
  reload(ok: boolean): void;
  /** The Prometheus text exposition. */
  render(): Promise<string>;
  readonly contentType: string;
}

/** `/predictions/reports/venuea/X/trust` -> `/predictions/reports`: a label with few values. */
export function endpointFamily(path: string): string {
  return path.split('/').slice(0, 3).join('/') || '/';
}

export function createMetrics(options: MetricsOptions): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'edgewatch_' });

  const polls = new Counter({ name: 'edgewatch_polls_total', help: 'Polls of a source (skipped ones excluded).', labelNames: ['source'], registers: [registry] });
  const pollErrors = new Counter({ name: 'edgewatch_poll_errors_total', help: 'Polls of a source that failed.', labelNames: ['source'], registers: [registry] });
  const pollDuration = new Histogram({
    name: 'edgewatch_poll_duration_seconds',
    help: 'Duration of one poll of a source.',
    labelNames: ['source'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  const apiLatency = new Histogram({
    name: 'edgewatch_api_request_duration_seconds',
    help: 'Research API request latency, per attempt.',
    labelNames: ['endpoint', 'status'],
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15],
    registers: [registry],
  });
  const alertsFired = new Counter({ name: 'edgewatch_alerts_fired_total', help: 'Alerts fired, per rule.', labelNames: ['rule'], registers: [registry] });
  const deliveries = new Counter({
    name: 'edgewatch_deliveries_total',
    help: 'Delivery attempts per channel and outcome (delivered, retrying, dead), counted per alert.',
    labelNames: ['channel', 'outcome'],
    registers: [registry],
  });
  const deliveryLatency = new Histogram({
    name: 'edgewatch_delivery_duration_seconds',
    help: 'Duration of one send to a channel.',
    labelNames: ['channel'],
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const reloads = new Counter({ name: 'edgewatch_rule_reloads_total', help: 'Reloads of the rules and templates, by result.', labelNames: ['result'], registers: [registry] });
  new Gauge({
    name: 'edgewatch_outbox_depth',
    help: 'Deliveries and digests waiting to be sent (new or to be retried).',
    registers: [registry],
    async collect() {
      this.set(await options.outboxDepth());
    },
  });
  new Gauge({
    name: 'edgewatch_digest_batches_pending',
    help: 'Digest batches collecting alerts until their time comes.',
    registers: [registry],
    async collect() {
      this.set(await options.digestBatchesPending());
    },
  });

  new Gauge({
    name: 'edgewatch_source_role',
    help: "This process's role for a source: 1 on its role's series (leader: it polls the source; standby: another process sharing the database does).",
    labelNames: ['source', 'role'],
    registers: [registry],
    collect() {
      for (const [source, role] of options.roles()) {
        this.set({ source, role }, 1);
        this.set({ source, role: role === 'leader' ? 'standby' : 'leader' }, 0);
      }
    },
  });
  new Gauge({
    name: 'edgewatch_database_up',
    help: 'Whether the database answered its last check (1) or not (0).',
    labelNames: ['database'],
    registers: [registry],
    collect() {
      const database = options.database();
      this.set({ database: database.kind }, database.ok ? 1 : 0);
    },
  });

  return {
    registry,
    pollDone(source, ok, durationMs) {
      polls.inc({ source });
      if (!ok) pollErrors.inc({ source });
      pollDuration.observe({ source }, durationMs / 1000);
    },
    apiRequest(info) {
      apiLatency.observe({ endpoint: endpointFamily(info.path), status: info.status === undefined ? 'none' : String(info.status) }, info.durationMs / 1000);
    },
    alertFired(rule) {
      alertsFired.inc({ rule });
    },
    delivery(channel, outcome, count, durationMs) {
      deliveries.inc({ channel, outcome }, count);
      deliveryLatency.observe({ channel }, durationMs / 1000);
    },
    reload(ok) {
      reloads.inc({ result: ok ? 'ok' : 'failed' });
    },
    render: () => registry.metrics(),
    contentType: registry.contentType,
  };
}
