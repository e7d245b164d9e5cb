/**
 * The service's configuration: every environment variable it reads, validated once at boot.
 * A bad value stops the process with a message naming each offending variable, so a typo in a
 * deployment fails loudly instead of falling back to a default nobody chose.
 */
export interface AppConfig {
  port: number;
  host: string;
  /** Real PostgreSQL+PostGIS when set; the embedded PGlite database otherwise. */
  databaseUrl: string | undefined;
  /**
   * PostgreSQL streaming replicas of DATABASE_URL (`DATABASE_REPLICA_URLS`, comma-separated) for the reads
   * that tolerate lag (`Sql.replicaRows`); empty: every read goes to the primary.
   */
  databaseReplicaUrls: string[];
  /** Where the embedded database keeps its files. */
  dataDir: string;
  /** Enables the admin API when set. */
  adminToken: string | undefined;
  logLevel: LogLevel;
  /** Largest accepted JSON request body, in bytes. */
  bodyLimitBytes: number;
  /** Largest accepted image upload, in bytes. */
  imageLimitBytes: number;
  /**
   * How much of a refused request body (over a limit, wrong media type) is read and discarded so the
   * answer reaches the client before the connection closes; past it the connection is just closed.
   */
  bodyDrainLimitBytes: number;
  pageSizeDefault: number;
  pageSizeMax: number;
  geoPageSizeDefault: number;
  geoPageSizeMax: number;
  /** Requests allowed per token in each rate-limit window; 0 disables rate limiting. */
  rateLimitMax: number;
  rateLimitWindowMs: number;
  /** Shared rate-limit store across instances when set. */
  redisUrl: string | undefined;
  /** A Redis command not answered within this is a failure: Redis is then treated as down. */
  redisCommandTimeoutMs: number;
  /** After a Redis failure, how long rate limits are counted per instance before Redis is tried again. */
  redisRetryAfterMs: number;
  databasePoolSize: number;
  /** Longest a single SQL statement may run; a frozen database then fails requests instead of hanging them. */
  databaseStatementTimeoutMs: number;
  /** Longest wait for a free pool connection before 503 `database_busy` (PostgreSQL; the embedded database waits its statement timeout). */
  databasePoolWaitMs: number;
  /**
   * How far V8 lets the heap grow past what was live after a full collection before the next one, in
   * percent (0: V8's own factors, 1.6 and 4 under the Docker image's heap cap). See common/heap-growth.ts.
   */
  heapGrowingPercent: number;
  requestTimeoutMs: number;
  /**
   * A connection on which nothing is received or sent for this long is closed (a client that stalls
   * mid-request, an idle keep-alive connection). Open event streams stay alive through their heartbeats.
   */
  idleTimeoutMs: number;
  /** Comma-separated allowed CORS origins; empty means no cross-origin access. */
  corsOrigins: string[];
  /** Public base URL used in absolute links; derived from the request when unset. */
  publicUrl: string | undefined;
  /** The key signing page cursors (at least 32 characters); unset: a random key kept in the database (service_keys). */
  cursorSecret: string | undefined;
  /** A vector tile holds one point per twin up to this many twins in its bounds, else its 64 × 64 cluster grid. */
  tileMaxFeatures: number;
  nodeEnv: string;
  /**
   * How timeline changes reach `GET /events/stream`: `postgres` (LISTEN/NOTIFY, across instances) or
   * `memory` (in-process; the embedded database's single session cannot hold a listening connection).
   */
  eventBus: 'postgres' | 'memory';
  /** Interval of the comment lines that keep idle event streams open. */
  eventStreamHeartbeatMs: number;
  /** How long the change log keeps changes, so an event stream can resume after a disconnect (older: `reset`). */
  streamRetentionHours: number;
  /** Events older than this many days (by `timestamp`) are deleted in bounded batches; 0 keeps them forever. */
  eventRetentionDays: number;
  /** Positions older than this many days (by `occurred`) are dropped a day's partition at a time; 0 keeps them all. */
  positionRetentionDays: number;
  /** Port of the Prometheus metrics listener (`GET /metrics`, apart from the API); 0 turns it off. */
  metricsPort: number;
  /**
   * OTLP/HTTP collector that receives traces (`OTEL_EXPORTER_OTLP_ENDPOINT`, the OpenTelemetry SDK's
   * own variable; its other `OTEL_*` variables apply too). Unset: no tracing, and the SDK is not loaded.
   */
  otelEndpoint: string | undefined;
  /** Webhook deliveries (docs/WEBHOOKS.md). */
  webhooks: WebhooksConfig;
}

export interface WebhooksConfig {
  /** Whether this instance delivers (every replica may; they share the outbox through `FOR UPDATE SKIP LOCKED`). */
  worker: boolean;
  /** Allows `http` and private, loopback and link-local receivers: tests and local development only. */
  allowPrivate: boolean;
  /** Text the AES-256-GCM key sealing webhook secrets is derived from (SHA-256); unset: a generated key in service_keys. */
  secretKey: string | undefined;
  /** One attempt's limit, connection and answer included. */
  timeoutMs: number;
  /** The first retry's delay; each later one doubles, with jitter, up to retryMaxDelayMs. */
  retryBaseMs: number;
  retryMaxDelayMs: number;
  /** How long after the change a delivery is retried before it is marked failed. */
  retryWindowMs: number;
  /** Attempts one instance has in flight at most. */
  concurrency: number;
  /** Attempts one instance has in flight to one webhook at most, so a slow receiver cannot take every slot. */
  perReceiver: number;
  /** How often a worker looks for due deliveries when nothing woke it. */
  pollMs: number;
  /** Delivered and failed deliveries, and the attempts log, are kept this long (`GET /webhooks/<id>/deliveries/`). */
  logRetentionDays: number;
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

type Env = Record<string, string | undefined>;

class EnvReader {
  readonly problems: string[] = [];
  constructor(private readonly env: Env) {}

  string(name: string, fallback: string): string {
    const value = this.env[name];
    return value === undefined || value === '' ? fallback : value;
  }

  optional(name: string): string | undefined {
    const value = this.env[name];
    return value === undefined || value === '' ? undefined : value;
  }

  integer(name: string, fallback: number, min: number, max: number): number {
    const raw = this.env[name];
    if (raw === undefined || raw === '') return fallback;
    if (!/^\d+$/.test(raw.trim())) {
      this.problems.push(`${name} must be a whole number between ${min} and ${max}, got "${raw}"`);
      return fallback;
    }
    const value = Number(raw);
    if (value < min || value > max) {
      this.problems.push(`${name} must be between ${min} and ${max}, got ${value}`);
      return fallback;
    }
    return value;
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const raw = this.env[name];
    if (raw === undefined || raw === '') return fallback;
    if (!(allowed as readonly string[]).includes(raw)) {
      this.problems.push(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
      return fallback;
    }
    return raw as T;
  }

  boolean(name: string, fallback: boolean): boolean {
    const raw = this.env[name];
    if (raw === undefined || raw === '') return fallback;
    if (raw !== 'true' && raw !== 'false') {
      this.problems.push(`${name} must be true or false, got "${raw}"`);
      return fallback;
    }
    return raw === 'true';
  }

  /** A comma-separated list of URLs, each checked like `url()`. */
  urls(name: string, protocols: string[]): string[] {
    const raw = this.optional(name);
    if (raw === undefined) return [];
    return raw
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean)
      .map((entry, index) => this.url(`${name} entry ${index + 1}`, protocols, entry) as string);
  }

  url(name: string, protocols: string[], given?: string): string | undefined {
    const raw = given ?? this.optional(name);
    if (raw === undefined) return undefined;
    try {
      const parsed = new URL(raw);
      if (!protocols.includes(parsed.protocol)) {
        this.problems.push(`${name} must be a ${protocols.join(' or ')} URL`);
      }
    } catch {
      this.problems.push(`${name} is not a valid URL`);
    }
    return raw;
  }
}

export function loadConfig(env: Env = process.env): AppConfig {
  const read = new EnvReader(env);
  const adminToken = read.optional('ADMIN_TOKEN');
  if (adminToken !== undefined && adminToken.length < 16) {
    read.problems.push('ADMIN_TOKEN must be at least 16 characters long');
  }
  const config: AppConfig = {
    port: read.integer('PORT', 3000, 0, 65535),
    host: read.string('HOST', '0.0.0.0'),
    databaseUrl: read.url('DATABASE_URL', ['postgres:', 'postgresql:']),
    databaseReplicaUrls: read.urls('DATABASE_REPLICA_URLS', ['postgres:', 'postgresql:']),
    dataDir: read.string('DATA_DIR', './data'),
    adminToken,
    logLevel: read.oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
    bodyLimitBytes: read.integer('BODY_LIMIT_BYTES', 1024 * 1024, 1024, 100 * 1024 * 1024),
    imageLimitBytes: read.integer('IMAGE_LIMIT_BYTES', 5 * 1024 * 1024, 1024, 100 * 1024 * 1024),
    bodyDrainLimitBytes: read.integer('BODY_DRAIN_LIMIT_BYTES', 64 * 1024 * 1024, 0, 1024 * 1024 * 1024),
    pageSizeDefault: read.integer('PAGE_SIZE_DEFAULT', 50, 1, 10000),
    pageSizeMax: read.integer('PAGE_SIZE_MAX', 100, 1, 10000),
    geoPageSizeDefault: read.integer('GEO_PAGE_SIZE_DEFAULT', 1000, 1, 100000),
    geoPageSizeMax: read.integer('GEO_PAGE_SIZE_MAX', 10000, 1, 100000),
    rateLimitMax: read.integer('RATE_LIMIT_MAX', 6000, 0, 10_000_000),
    rateLimitWindowMs: read.integer('RATE_LIMIT_WINDOW_MS', 60_000, 100, 86_400_000),
    redisUrl: read.url('REDIS_URL', ['redis:', 'rediss:']),
    redisCommandTimeoutMs: read.integer('REDIS_COMMAND_TIMEOUT_MS', 50, 1, 60_000),
    redisRetryAfterMs: read.integer('REDIS_RETRY_AFTER_MS', 5_000, 100, 3_600_000),
    databasePoolSize: read.integer('DATABASE_POOL_SIZE', 10, 1, 500),
    databaseStatementTimeoutMs: read.integer('DATABASE_STATEMENT_TIMEOUT_MS', 15_000, 100, 3_600_000),
    databasePoolWaitMs: read.integer('DATABASE_POOL_WAIT_MS', 2_000, 10, 3_600_000),
    heapGrowingPercent: read.integer('HEAP_GROWING_PERCENT', 50, 0, 300),
    requestTimeoutMs: read.integer('REQUEST_TIMEOUT_MS', 30_000, 100, 3_600_000),
    idleTimeoutMs: read.integer('IDLE_TIMEOUT_MS', 60_000, 100, 3_600_000),
    corsOrigins: read
      .string('CORS_ORIGINS', '')
      .split(',')
      .map((origin) => origin.trim())
      .filter(Boolean),
    publicUrl: read.url('PUBLIC_URL', ['http:', 'https:']),
    cursorSecret: read.optional('CURSOR_SECRET'),
    tileMaxFeatures: read.integer('TILE_MAX_FEATURES', 4096, 1, 1_000_000),
    nodeEnv: read.string('NODE_ENV', 'development'),
    eventBus: read.oneOf('EVENT_BUS', ['postgres', 'memory'] as const, env.DATABASE_URL ? 'postgres' : 'memory'),
    eventStreamHeartbeatMs: read.integer('EVENT_STREAM_HEARTBEAT_MS', 15_000, 50, 3_600_000),
    streamRetentionHours: read.integer('STREAM_RETENTION_HOURS', 24, 1, 24 * 365),
    eventRetentionDays: read.integer('EVENT_RETENTION_DAYS', 0, 0, 36_500),
    positionRetentionDays: read.integer('POSITION_RETENTION_DAYS', 90, 0, 36_500),
    metricsPort: read.integer('METRICS_PORT', 9464, 0, 65535),
    otelEndpoint: read.url('OTEL_EXPORTER_OTLP_ENDPOINT', ['http:', 'https:']),
    webhooks: {
      worker: read.boolean('WEBHOOKS_WORKER', true),
      allowPrivate: read.boolean('WEBHOOKS_ALLOW_PRIVATE', false),
      secretKey: read.optional('WEBHOOKS_SECRET_KEY'),
      timeoutMs: read.integer('WEBHOOKS_TIMEOUT_MS', 10_000, 10, 600_000),
      retryBaseMs: read.integer('WEBHOOKS_RETRY_BASE_MS', 5_000, 1, 3_600_000),
      retryMaxDelayMs: read.integer('WEBHOOKS_RETRY_MAX_DELAY_MS', 3_600_000, 1, 86_400_000),
      retryWindowMs: read.integer('WEBHOOKS_RETRY_WINDOW_MS', 86_400_000, 1, 30 * 86_400_000),
      concurrency: read.integer('WEBHOOKS_CONCURRENCY', 64, 1, 10_000),
      perReceiver: read.integer('WEBHOOKS_PER_RECEIVER', 8, 1, 10_000),
      pollMs: read.integer('WEBHOOKS_POLL_MS', 1_000, 10, 3_600_000),
      logRetentionDays: read.integer('WEBHOOKS_LOG_RETENTION_DAYS', 30, 1, 3650),
    },
  };
  if (config.eventBus === 'postgres' && !config.databaseUrl) {
    read.problems.push('EVENT_BUS=postgres needs DATABASE_URL (the embedded database uses EVENT_BUS=memory)');
  }
  if (config.databaseReplicaUrls.length > 0 && !config.databaseUrl) {
    read.problems.push('DATABASE_REPLICA_URLS needs DATABASE_URL (replicas of the embedded database do not exist)');
  }
  if (config.idleTimeoutMs <= config.eventStreamHeartbeatMs) {
    read.problems.push('IDLE_TIMEOUT_MS must exceed EVENT_STREAM_HEARTBEAT_MS, or idle event streams would be cut');
  }
  if (config.metricsPort !== 0 && config.metricsPort === config.port) {
    read.problems.push('METRICS_PORT must differ from PORT (metrics are not served on the API port)');
  }
  if (config.cursorSecret !== undefined && config.cursorSecret.length < 32) {
    read.problems.push('CURSOR_SECRET must be at least 32 characters');
  }
  if (config.webhooks.secretKey !== undefined && config.webhooks.secretKey.length < 32) {
    read.problems.push('WEBHOOKS_SECRET_KEY must be at least 32 characters');
  }
  if (config.webhooks.retryBaseMs > config.webhooks.retryMaxDelayMs) {
    read.problems.push('WEBHOOKS_RETRY_BASE_MS must not exceed WEBHOOKS_RETRY_MAX_DELAY_MS');
  }
  if (config.pageSizeDefault > config.pageSizeMax) {
    read.problems.push('PAGE_SIZE_DEFAULT must not exceed PAGE_SIZE_MAX');
  }
  if (config.geoPageSizeDefault > config.geoPageSizeMax) {
    read.problems.push('GEO_PAGE_SIZE_DEFAULT must not exceed GEO_PAGE_SIZE_MAX');
  }
  if (read.problems.length > 0) throw new ConfigError(read.problems);
  return config;
}

/** Injection token under which the validated configuration is provided. */
export const APP_CONFIG = Symbol('APP_CONFIG');
