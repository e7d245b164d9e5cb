import fastifyRateLimit, { type FastifyRateLimitStore, type FastifyRateLimitStoreCtor, type RateLimitPluginOptions } from '@fastify/rate-limit';
import LocalStore from '@fastify/rate-limit/store/LocalStore.js';
import RedisStore from '@fastify/rate-limit/store/RedisStore.js';
import { Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type Redis from 'ioredis';
import type { AppConfig } from '../../config/app-config.js';
import { tooManyRequests } from '../json-api/api-error.js';
import { FailoverStore } from './rate-limit-store.js';

/** Prefix of the counters in Redis (`twin-service:rate:<token id>`). */
export const REDIS_KEY_PREFIX = 'twin-service:rate:';
/**
 * Tokens counted in memory (the plugin's LRU): per instance without REDIS_URL, or while Redis is down.
 * Past it the least recently seen token's count is forgotten; about 100 bytes each.
 */
const LOCAL_TOKENS = 100_000;
/** The name of the one policy in `RateLimit-Policy` and `RateLimit`. */
const POLICY = '"token"';

type LimiterConfig = Pick<AppConfig, 'rateLimitMax' | 'rateLimitWindowMs' | 'redisUrl' | 'redisCommandTimeoutMs' | 'redisRetryAfterMs'>;
type Check = ReturnType<FastifyInstance['createRateLimit']>;

/**
 * Per-token request budget (RATE_LIMIT_MAX requests per RATE_LIMIT_WINDOW_MS, the window starting at the
 * token's first request), counted by @fastify/rate-limit: in Redis across replicas when REDIS_URL is set
 * (FailoverStore: per instance while Redis is down or frozen), in memory otherwise.
 *
 * Called by RateLimitGuard after TokenGuard rather than as the plugin's own onRequest hook: the key is the
 * token's id, known once the token is resolved, so unknown tokens create no counters and public and admin
 * routes are not counted. Answers carry the IETF draft fields `RateLimit-Policy` and `RateLimit`
 * (draft-ietf-httpapi-ratelimit-headers-09; the plugin's `enableDraftSpec` writes the older
 * `RateLimit-Limit`/`-Remaining`/`-Reset` trio), the 429 the service's errors document.
 */
export class RateLimiter implements OnModuleInit, OnApplicationShutdown {
  private readonly redis: Redis | undefined;
  private readonly store: FailoverStore | undefined;
  private readonly policy: string;
  private check: Check | undefined;

  constructor(private readonly config: LimiterConfig) {
    this.policy = `${POLICY};q=${config.rateLimitMax};w=${Math.ceil(config.rateLimitWindowMs / 1000)}`;
    // With limiting off (RATE_LIMIT_MAX=0) nothing is counted: no Redis connection to keep open.
    if (!config.redisUrl || !this.limiting) return;
    // No ioredis commandTimeout: its timer can fire after an event-loop pause before the reply already
    // waiting on the socket is read, and mark a healthy Redis down (see withinBudget). No offline queue
    // and no retries: a command while disconnected fails at once and is counted locally instead.
    // ioredis is loaded here, only where counts are shared: an instance without REDIS_URL keeps its
    // heap out of every major collection (as webhook-sender.ts does with undici).
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const RedisClient = require('ioredis') as typeof Redis;
    const redis = new RedisClient(config.redisUrl, { maxRetriesPerRequest: 0, enableOfflineQueue: false, connectTimeout: 1000 });
    const logger = new Logger('RateLimiter');
    this.store = new FailoverStore(redis, new RedisStore(false, false, redis, REDIS_KEY_PREFIX), new LocalStore(false, false, LOCAL_TOKENS), {
      budgetMs: config.redisCommandTimeoutMs,
      retryAfterMs: config.redisRetryAfterMs,
      log: logger,
    });
    redis.on('error', (error: Error) => this.store!.markDown(error));
    this.redis = redis;
  }

  /** False with RATE_LIMIT_MAX=0: nothing is counted, no header is added. */
  get limiting(): boolean {
    return this.config.rateLimitMax > 0;
  }

  /** Registers the plugin on the application's Fastify instance (app.factory.ts, before the routes). */
  async register(fastify: FastifyInstance): Promise<void> {
    if (!this.limiting) return;
    const options: RateLimitPluginOptions = {
      // No hook of its own on any route: RateLimitGuard asks it (see the class comment).
      global: false,
      max: this.config.rateLimitMax,
      timeWindow: this.config.rateLimitWindowMs,
      cache: LOCAL_TOKENS,
      keyGenerator: (request) => request.auth!.tokenId,
    };
    if (this.store) options.store = existingStore(this.store);
    await fastify.register(fastifyRateLimit, options);
    this.check = fastify.createRateLimit();
  }

  /** Boot waits for the connection (at most its connect timeout), so the first requests share the budget. */
  async onModuleInit(): Promise<void> {
    const redis = this.redis;
    if (!redis || redis.status === 'ready') return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        redis.off('ready', done);
        resolve();
      };
      const timer = setTimeout(done, 1000);
      redis.once('ready', done);
    });
  }

  /** Counts one request of the authenticated token; throws the 429 once the window's budget is spent. */
  async consume(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    if (!this.check) throw new Error('RateLimiter.register() was not called on the Fastify instance');
    const result = await this.check(request);
    // No allow-list is configured, so every answer is a count; the narrowing is for the types.
    if (result.isAllowed) return;
    reply.header('ratelimit-policy', this.policy);
    reply.header('ratelimit', `${POLICY};r=${result.remaining};t=${result.ttlInSeconds}`);
    if (result.isExceeded) throw tooManyRequests(Math.max(1, result.ttlInSeconds));
  }

  async onApplicationShutdown(): Promise<void> {
    this.store?.close();
    this.redis?.disconnect();
  }
}

/**
 * The plugin builds its store itself (`new options.store(pluginOptions)`), but this one exists already:
 * the limiter owns its Redis connection and closes it on shutdown. A constructor that returns an object
 * makes `new` answer that object.
 */
function existingStore(store: FastifyRateLimitStore): FastifyRateLimitStoreCtor {
  return function ExistingStore() {
    return store;
  } as unknown as FastifyRateLimitStoreCtor;
}
