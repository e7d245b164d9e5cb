import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { Metrics } from './metrics.js';

/**
 * `GET /metrics` (Prometheus text format) on METRICS_PORT, a listener of its own: scrapes stay off
 * the API port (its rate limits, its logs, and a public address). METRICS_PORT=0 turns it off. It
 * never keeps the process alive (unref) and closes with the application. Started by the HTTP app
 * (app.factory.ts), not by every Nest context: a CLI command is not a server to scrape, and would take
 * the port of the server it runs beside.
 */
@Injectable()
export class MetricsServer implements OnApplicationShutdown {
  private readonly logger = new Logger('Metrics');
  private server: Server | undefined;

  constructor(
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The port it listens on (tests ask for a free one), or undefined when off. */
  get port(): number | undefined {
    const address = this.server?.address();
    return address && typeof address === 'object' ? (address as AddressInfo).port : undefined;
  }

  async start(): Promise<void> {
    if (this.config.metricsPort === 0) return;
    const server = createServer((request, response) => {
      if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
        response.writeHead(404, { 'content-type': 'text/plain' }).end('not found: GET /metrics\n');
        return;
      }
      this.metrics.registry.metrics().then(
        (text) => response.writeHead(200, { 'content-type': this.metrics.registry.contentType }).end(text),
        (error: Error) => {
          this.logger.error(`metrics collection failed: ${error.message}`);
          response.writeHead(500, { 'content-type': 'text/plain' }).end('metrics collection failed\n');
        },
      );
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.config.metricsPort, this.config.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.unref();
    this.server = server;
    this.logger.log(`metrics on port ${this.port} (GET /metrics)`);
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
