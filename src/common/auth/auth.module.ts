import { Global, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AuthRepository } from './auth.repository.js';
import { Credentials } from './credentials.js';
import { OrganizationGuard, RateLimitGuard, TokenGuard, TwinGuard } from './guards.js';
import { RateLimiter } from './rate-limiter.js';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';

/** Global guards, run in this order on every route: who, how often, which organization, which twin. */
@Global()
@Module({
  providers: [
    AuthRepository,
    Credentials,
    { provide: RateLimiter, inject: [APP_CONFIG], useFactory: (config: AppConfig) => new RateLimiter(config) },
    { provide: APP_GUARD, useClass: TokenGuard },
    { provide: APP_GUARD, useClass: RateLimitGuard },
    { provide: APP_GUARD, useClass: OrganizationGuard },
    { provide: APP_GUARD, useClass: TwinGuard },
  ],
  exports: [AuthRepository, Credentials, RateLimiter],
})
export class AuthModule {}
