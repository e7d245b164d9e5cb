import { appendFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { PassThrough } from 'node:stream';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { DataSource } from 'typeorm';
import { AdminService, BootstrapResult } from '../../src/admin/admin.service';
import { createApp } from '../../src/app.factory';
import type { Tenant, TwinTenant } from '../../src/common/auth/tenant';
import { AppConfig, loadConfig } from '../../src/config/app-config';
import { type Answer, observeServer, type OpenApiDocument, OpenApiValidator, validationEnabled, type ValidationStats } from './openapi-validator';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';
export const JSON_API = 'application/vnd.api+json';

export const embeddedDatabase = () => process.env.TEST_DATABASE_KIND === 'embedded';

/** One validator per OpenAPI document (ajv compiles each schema once per test file). */
const validators = new Map<string, OpenApiValidator>();

/**
 * The service as it is served, on the shared test database, with its logs captured. Every answer it
 * gives (through inject, or to a client once it listens) is checked against its OpenAPI document
 * (test/support/openapi-validator.ts): a mismatch fails the request's inject, or close() for answers
 * sent over a socket. OPENAPI_VALIDATION=off turns the checks off; OPENAPI_VALIDATION_STATS=<file> appends
 * each app's counts to that file when it closes.
 */
export class TestApp {
  readonly logs: string[] = [];
  /** Answers given over sockets that the document does not describe, reported by close(). */
  private readonly undescribed: string[] = [];
  private validator: OpenApiValidator | undefined;
  /** Answers checked against the document, and answers outside it. */
  readonly validation: ValidationStats = { validated: 0, skipped: 0 };

  private constructor(
    readonly app: NestFastifyApplication,
    readonly config: AppConfig,
  ) {}

  static async start(env: Record<string, string> = {}): Promise<TestApp> {
    const url = process.env.TEST_DATABASE_URL;
    if (!url) throw new Error('TEST_DATABASE_URL is not set: run e2e tests through jest (global-setup prepares the database)');
    const config = loadConfig({
      DATABASE_URL: url,
      // PGlite is a single session: one connection (see embedded-postgres.ts).
      DATABASE_POOL_SIZE: embeddedDatabase() ? '1' : '5',
      ADMIN_TOKEN,
      LOG_LEVEL: 'warn',
      RATE_LIMIT_MAX: '0',
      // Several apps run in one process: no metrics listener unless a test asks for one.
      METRICS_PORT: '0',
      // No background deliveries in tests that do not ask for them (test/e2e/webhooks.e2e-spec.ts does).
      WEBHOOKS_WORKER: 'false',
      ...env,
    });
    const stream = new PassThrough();
    const app = await createApp(config, { logStream: stream });
    const testApp = new TestApp(app, config);
    stream.on('data', (chunk: Buffer) => testApp.logs.push(chunk.toString()));
    if (validationEnabled()) await testApp.validateAnswers();
    return testApp;
  }

  private async validateAnswers(): Promise<void> {
    const text = (await this.app.inject({ method: 'GET', url: '/docs-json' })).body;
    let validator = validators.get(text);
    if (!validator) {
      validator = new OpenApiValidator(JSON.parse(text) as OpenApiDocument);
      validators.set(text, validator);
    }
    this.validator = validator;
    observeServer(this.app.getHttpServer() as Server, (answer) => {
      const problem = validator.check(answer, this.validation);
      if (problem) this.undescribed.push(problem);
    });
  }

  get dataSource(): DataSource {
    return this.app.get(DataSource);
  }

  /** Raw request through the whole Fastify + Nest stack, without opening a port; the answer must be the document's. */
  async inject(options: InjectOptions): Promise<LightMyRequestResponse> {
    const response = (await this.app.inject(options)) as LightMyRequestResponse;
    const problem = this.validator?.check(injectedAnswer(options, response), this.validation);
    if (problem) throw new Error(problem);
    return response;
  }

  /** Creates a twin in the tenant's organization through the API (`POST /my/twins/`); its id. */
  async createTwin(tenant: TestTenant, attributes: Record<string, unknown>): Promise<string> {
    const response = await this.inject({
      method: 'POST',
      url: '/my/twins/',
      headers: { ...tenant.headers(), 'content-type': JSON_API },
      payload: document({ type: 'twins', attributes }),
    });
    if (response.statusCode !== 201) throw new Error(`create twin: ${response.statusCode} ${response.body}`);
    return response.json().data.id as string;
  }

  /** A fresh organization with an account, a twin and a token: isolated data for one test. */
  async tenant(names: Partial<{ organization: string; account: string; twin: string }> = {}): Promise<TestTenant> {
    const created = await this.app.get(AdminService).bootstrap({
      organization: names.organization ?? 'Test organization',
      account: names.account ?? 'Test account',
      twin: names.twin ?? 'Test twin',
    });
    return new TestTenant(created);
  }

  async close(): Promise<void> {
    await this.app.close();
    // The embedded socket frees a connection slot asynchronously; let it before the next app connects.
    await new Promise((resolve) => setTimeout(resolve, 50));
    if (this.validator && process.env.OPENAPI_VALIDATION_STATS) {
      appendFileSync(process.env.OPENAPI_VALIDATION_STATS, `${JSON.stringify({ file: expect.getState().testPath, ...this.validation })}\n`);
    }
    if (this.undescribed.length > 0) throw new Error(`${this.undescribed.length} answer(s) over a socket the OpenAPI document does not describe:\n${this.undescribed.join('\n')}`);
  }
}

function injectedAnswer(options: InjectOptions, response: LightMyRequestResponse): Answer {
  const url = typeof options.url === 'string' ? options.url : typeof options.path === 'string' ? options.path : (options.url?.pathname ?? options.path?.pathname ?? '/');
  return {
    method: options.method ?? 'GET',
    url,
    status: response.statusCode,
    contentType: response.headers['content-type'] === undefined ? undefined : String(response.headers['content-type']),
    contentEncoding: response.headers['content-encoding'] === undefined ? undefined : String(response.headers['content-encoding']),
    body: response.rawPayload,
  };
}

export class TestTenant implements BootstrapResult {
  organizationId: string;
  accountId: string;
  twinId: string;
  tokenId: string;
  token: string;

  constructor(created: BootstrapResult) {
    Object.assign(this, created);
  }

  /** The tenant as services and repositories take it (what the guards make of its headers). */
  asTenant(): Tenant {
    return { account: { id: this.accountId, name: 'Test account' }, organization: { id: this.organizationId, name: 'Test organization' }, tokenId: this.tokenId };
  }

  /** The tenant acting as one of its twins (default: its own), as services and repositories take it. */
  asTwinTenant(twinId = this.twinId): TwinTenant {
    return { ...this.asTenant(), twin: { id: twinId } };
  }

  /** Token and organization headers; with `twin`, also `X-Twin` (default: the tenant's own twin). */
  headers(options: { twin?: string | boolean } = {}): Record<string, string> {
    const headers: Record<string, string> = { authorization: `Token ${this.token}`, 'x-organization': this.organizationId };
    if (options.twin) headers['x-twin'] = options.twin === true ? this.twinId : options.twin;
    return headers;
  }
}

/** `{type, attributes, …}` wrapped as a request document. */
export const document = (data: Record<string, unknown>) => JSON.stringify({ data });

/** Asserts a response is a JSON:API errors document with this status, and returns its first error. */
export function expectError(response: LightMyRequestResponse, status: number, source?: Record<string, string>) {
  if (response.statusCode !== status) {
    throw new Error(`expected ${status}, got ${response.statusCode}: ${response.body}`);
  }
  expect(response.headers['content-type']).toBe(JSON_API);
  const body = response.json();
  expect(Array.isArray(body.errors)).toBe(true);
  expect(body.errors.length).toBeGreaterThan(0);
  for (const error of body.errors) {
    expect(error).toEqual(
      expect.objectContaining({ status: String(status), code: expect.any(String), title: expect.any(String), detail: expect.any(String) }),
    );
  }
  if (source) expect(body.errors[0].source).toEqual(source);
  return body.errors[0] as { status: string; code: string; title: string; detail: string; source?: Record<string, string> };
}

/** ISO 8601 UTC with exactly six fractional digits. */
export const MICROSECOND_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
