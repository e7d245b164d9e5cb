import { BeforeApplicationShutdown, Inject, Logger, Module } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { DatabaseNotifications } from '../database/notifications.js';
import { serviceKey } from '../database/service-keys.js';
import { Sql } from '../database/sql.js';
import { Metrics } from '../common/metrics/metrics.js';
import { SecretBox } from './secret-box.js';
import { WebhookWorker } from './webhook-worker.js';
import { WebhooksController } from './webhooks.controller.js';
import { WebhooksRepository } from './webhooks.repository.js';
import { WebhooksService } from './webhooks.service.js';

/**
 * Webhooks for partners: the `/webhooks/` routes and the worker delivering the outbox. The worker is
 * started by the HTTP app (app.factory.ts) unless WEBHOOKS_WORKER=false, not by every Nest context (the
 * CLI's has none), and stopped before the database closes.
 */
@Module({
  controllers: [WebhooksController],
  providers: [
    WebhooksRepository,
    WebhooksService,
    {
      provide: SecretBox,
      inject: [APP_CONFIG, Sql],
      useFactory: async (config: AppConfig, sql: Sql): Promise<SecretBox> => {
        if (config.webhooks.secretKey) return SecretBox.fromText(config.webhooks.secretKey);
        if (config.nodeEnv === 'production') {
          new Logger('Webhooks').warn('WEBHOOKS_SECRET_KEY is not set: webhook secrets are sealed with a key kept in the database (service_keys), beside them; set it.');
        }
        return SecretBox.fromKey(await serviceKey(sql, 'webhooks'));
      },
    },
    {
      provide: WebhookWorker,
      inject: [WebhooksRepository, SecretBox, APP_CONFIG, DatabaseNotifications, Metrics],
      useFactory: (repository: WebhooksRepository, secrets: SecretBox, config: AppConfig, notifications: DatabaseNotifications | null, metrics: Metrics) => {
        const attempts = metrics.counter({
          name: 'webhook_delivery_attempts_total',
          help: 'Webhook delivery attempts by this instance, by outcome: delivered (2xx), retry (to be tried again), failed (given up after the retry window).',
          labelNames: ['outcome'],
        });
        metrics.gauge({
          name: 'webhook_queue_depth',
          help: 'Webhook deliveries waiting to be delivered (the outbox, all instances), read from the database at each scrape.',
          async collect() {
            this.set(await repository.pendingCount());
          },
        });
        return new WebhookWorker(repository, secrets, config.webhooks, notifications, undefined, (outcome) => attempts.inc({ outcome }));
      },
    },
  ],
  exports: [WebhookWorker],
})
export class WebhooksModule implements BeforeApplicationShutdown {
  constructor(@Inject(WebhookWorker) private readonly worker: WebhookWorker) {}

  async beforeApplicationShutdown(): Promise<void> {
    await this.worker.stop();
  }
}
