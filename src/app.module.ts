import { DynamicModule, Module } from '@nestjs/common';
import { AccountsModule } from './accounts/accounts.module.js';
import { AdminModule } from './admin/admin.module.js';
import { AuthModule } from './common/auth/auth.module.js';
import { JsonApiModule } from './common/json-api/json-api.module.js';
import { MetricsModule } from './common/metrics/metrics.module.js';
import type { AppConfig } from './config/app-config.js';
import { ConfigModule } from './config/config.module.js';
import { DatabaseModule } from './database/database.module.js';
import { EventsModule } from './events/events.module.js';
import { HealthModule } from './health/health.module.js';
import { ImagesModule } from './images/images.module.js';
import { MapsModule } from './maps/maps.module.js';
import { OperationsModule } from './operations/operations.module.js';
import { OrganizationsModule } from './organizations/organizations.module.js';
import { QuestsModule } from './quests/quests.module.js';
import { RevenueModule } from './revenue/revenue.module.js';
import { TwinsModule } from './twins/twins.module.js';
import { WebhooksModule } from './webhooks/webhooks.module.js';
import { GeofencesModule } from './geofences/geofences.module.js';
import { OgcModule } from './ogc/ogc.module.js';

/** Feature modules of the service; each owns its routes, rules and SQL. */
export const FEATURE_MODULES = [HealthModule, OrganizationsModule, AccountsModule, AdminModule, TwinsModule, EventsModule, ImagesModule, RevenueModule, QuestsModule, MapsModule, OperationsModule, WebhooksModule, GeofencesModule, OgcModule];

@Module({})
export class AppModule {
  static register(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [ConfigModule.forRoot(config), DatabaseModule, MetricsModule, JsonApiModule, AuthModule, ...FEATURE_MODULES],
    };
  }
}
