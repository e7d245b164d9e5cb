import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type CounterConfiguration, type GaugeConfiguration, type HistogramConfiguration } from 'prom-client';
import type { ObservedRequest } from '../http/request-observer.js';

/** Request duration buckets, in seconds: the API answers in milliseconds; tiles and geo listings take longer. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The service's Prometheus metrics: one registry per application (tests build several in one
 * process), served by MetricsServer on METRICS_PORT. Modules inject `Metrics` and register their own
 * series at construction, e.g.
 *
 *   constructor(metrics: Metrics) {
 *     this.delivered = metrics.counter({ name: 'webhook_deliveries_total', help: '…', labelNames: ['outcome'] });
 *     metrics.gauge({ name: 'webhook_queue_depth', help: '…', collect() { this.set(queue.size); } });
 *   }
 *
 * Names are `snake_case` with a unit suffix (`_seconds`, `_bytes`, `_total` for counters); labels take
 * a small, fixed set of values (never ids, URLs or user input).
 */
export class Metrics {
  readonly registry = new Registry();
  readonly httpRequestDuration: Histogram<'method' | 'route' | 'status'>;

  constructor() {
    // Process and runtime: CPU, memory, heap, GC, handles, and event-loop lag (nodejs_eventloop_lag_*).
    collectDefaultMetrics({ register: this.registry });
    this.httpRequestDuration = this.histogram({
      name: 'http_request_duration_seconds',
      help: 'Time to answer a request (an event stream: how long it stayed open), by method, route template and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: DURATION_BUCKETS,
    });
  }

  counter<T extends string>(config: Omit<CounterConfiguration<T>, 'registers'>): Counter<T> {
    return new Counter({ ...config, registers: [this.registry] });
  }

  gauge<T extends string>(config: Omit<GaugeConfiguration<T>, 'registers'>): Gauge<T> {
    return new Gauge({ ...config, registers: [this.registry] });
  }

  histogram<T extends string>(config: Omit<HistogramConfiguration<T>, 'registers'>): Histogram<T> {
    return new Histogram({ ...config, registers: [this.registry] });
  }

  /** For observeRequests (common/http/request-observer.ts). */
  readonly observeRequest = (request: ObservedRequest): void => {
    this.httpRequestDuration.observe({ method: request.method, route: request.route, status: String(request.status) }, request.durationMs / 1000);
  };
}
