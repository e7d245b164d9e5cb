import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { OpenAPIObject } from '@nestjs/swagger';
import { AppModule } from './app.module.js';
import { loadConfig } from './config/app-config.js';
import { createOpenApiDocument } from './common/openapi/setup.js';

/**
 * The document GET /docs-json serves, made without a database or a listening server: Nest's preview
 * mode builds the modules and routes without instantiating a provider (no connection is opened).
 * scripts/openapi-document.mjs writes it for the linters and the client generator;
 * test/e2e/openapi-contract.e2e-spec.ts checks it is the served one.
 */
export async function createOpenApiDocumentOffline(): Promise<OpenAPIObject> {
  const app = await NestFactory.create(AppModule.register(loadConfig({})), new FastifyAdapter(), { preview: true, logger: false, abortOnError: false });
  try {
    return createOpenApiDocument(app);
  } finally {
    await app.close();
  }
}
