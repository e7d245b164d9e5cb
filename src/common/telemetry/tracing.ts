import FastifyOtelInstrumentation from '@fastify/otel';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { NodeSDK } from '@opentelemetry/sdk-node';

/**
 * OpenTelemetry traces to the OTLP/HTTP collector named by OTEL_EXPORTER_OTLP_ENDPOINT: a span per
 * HTTP request (server and client), per Fastify route and hook, and per pg query. main.ts imports
 * this module only when the variable is set, and before anything else of the service, since the
 * instrumentations patch `http`, `fastify` and `pg` as they are loaded; unset, none of it is loaded.
 * The SDK reads its other standard variables itself (OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER,
 * OTEL_BSP_*, OTEL_EXPORTER_OTLP_HEADERS, …).
 */
export function startTracing(): { shutdown(): Promise<void> } {
  const sdk = new NodeSDK({
    serviceName: process.env.OTEL_SERVICE_NAME ?? 'twin-service',
    traceExporter: new OTLPTraceExporter(),
    instrumentations: [
      // Metrics scrapes have a listener of their own and are not worth a trace each.
      new HttpInstrumentation({ ignoreIncomingRequestHook: (request) => request.url === '/metrics' }),
      new FastifyOtelInstrumentation({ registerOnInitialization: true }),
      new PgInstrumentation(),
    ],
  });
  sdk.start();
  return { shutdown: () => sdk.shutdown() };
}
