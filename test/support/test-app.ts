import { PassThrough } from 'node:stream';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { DataSource } from 'typeorm';
import { AdminService, BootstrapResult } from '../../src/admin/admin.service';
import { createApp } from '../../src/app.factory';
import { AppConfig, loadConfig } from '../../src/config/app-config';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';
export const JSON_API = 'application/vnd.api+json';

export const embeddedDatabase = () => process.env.TEST_DATABASE_KIND === 'embedded';

/** The service as it is served, on the shared test database, with its logs captured. */
export class TestApp {
  readonly logs: string[] = [];

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
      ...env,
    });
    const stream = new PassThrough();
    const app = await createApp(config, { logStream: stream });
    const testApp = new TestApp(app, config);
    stream.on('data', (chunk: Buffer) => testApp.logs.push(chunk.toString()));
    return testApp;
  }

  get dataSource(): DataSource {
    return this.app.get(DataSource);
  }

  /** Raw request through the whole Fastify + Nest stack, without opening a port. */
  inject(options: InjectOptions): Promise<LightMyRequestResponse> {
    return this.app.inject(options) as Promise<LightMyRequestResponse>;
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
  }
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
  expect(response.headers['content-type']).toMatch(/^application\/vnd\.api\+json/);
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
