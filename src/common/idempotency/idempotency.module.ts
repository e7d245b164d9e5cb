import { Module } from '@nestjs/common';
import { IdempotencyKeys } from './idempotency-keys.js';
import { IdempotencyRepository } from './idempotency.repository.js';

/** Idempotency keys of acting twins, shared by the routes that honour `Idempotency-Key`. */
@Module({ providers: [IdempotencyRepository, IdempotencyKeys], exports: [IdempotencyKeys] })
export class IdempotencyModule {}
