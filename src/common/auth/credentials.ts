import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { DatabaseNotifications } from '../../database/notifications.js';
import { AuthRepository, type ResolvedCredentials } from './auth.repository.js';
import { hashToken } from './tokens.js';

/** The NOTIFY channel of credential changes (migration 1763800000000). */
export const CREDENTIALS_CHANNEL = 'twin_credentials';

/** Resolutions kept at most; the cache starts over when full. */
const MAX_ENTRIES = 10_000;

/** A safety net only: the change notices are what keeps entries right. */
const MAX_AGE_MS = 60_000;

/**
 * An entry this old is still served, and looked up again behind the request that found it: a key in
 * steady use is never looked up in front of requests. Expiring in front of them, the key of 50 busy
 * connections was missed by every request that came before the first new answer, and each of them
 * queued its own lookup for a pooled connection behind the pages in progress, then queued its page again.
 */
const REFRESH_AFTER_MS = 45_000;

interface Entry {
  credentials: ResolvedCredentials;
  cachedAt: number;
  /** When the token expires (ms since the epoch, rounded down), or Infinity. */
  expiresAt: number;
}

/**
 * Who is calling, with a cache in front of the one credentials query (AuthRepository): a repeated
 * request with the same token and tenant headers costs no round trip to PostgreSQL.
 *
 * What keeps it exact:
 * - Only complete successes are kept (token live; the organization and twin asked for found): an
 *   insert cannot make such an answer wrong, and every update or delete that can is announced by a
 *   trigger on `twin_credentials` (migration 1763800000000) when it commits, on whichever instance or
 *   connection it ran. A notice empties the cache.
 * - The cache answers only while the listening connection is up; it is emptied when that connection
 *   drops and again when it is back (notices sent meanwhile were lost).
 * - A token's expiry is checked on every hit; this instance's own revocations empty it at once
 *   (`forget`), so "revoked, then next request" is never served from the cache here. On other
 *   instances the notice arrives within milliseconds of the commit.
 * - With the embedded database (one process, no listening connection) there is no cache.
 *
 * Requests that miss together share one lookup (one a key while it is in flight, and only within one
 * generation: a request that came after a notice never takes an answer read before it).
 */
@Injectable()
export class Credentials implements OnModuleInit {
  private readonly entries = new Map<string, Entry>();
  private answering = false;
  /** Bumped by every `forget`: a query that was in flight across one must not fill the cache. */
  private generation = 0;
  /** The lookups in flight of this generation, by key (emptied by `forget`). */
  private readonly inFlight = new Map<string, Promise<ResolvedCredentials | undefined>>();

  constructor(
    private readonly repository: AuthRepository,
    @Inject(DatabaseNotifications) private readonly notifications: DatabaseNotifications | null,
  ) {}

  async onModuleInit(): Promise<void> {
    const notifications = this.notifications;
    if (!notifications) return;
    notifications.onConnection((listening) => {
      this.forget();
      this.answering = listening;
    });
    // Not awaited: the service starts without the cache when the listening connection cannot be made yet.
    notifications.subscribe(CREDENTIALS_CHANNEL, () => this.forget()).catch(() => undefined);
  }

  /**
   * The resolution, synchronously when the cache has it (a guard that returns a plain value costs Nest
   * no promise and no microtask turn), else the one credentials query's promise.
   */
  resolve(token: string, organizationId: string | undefined, twinId: string | undefined): ResolvedCredentials | undefined | Promise<ResolvedCredentials | undefined> {
    // Keyed by the token itself: its SHA-256 (what the database is asked with) cost more than the rest
    // of a cache hit. The token lives in this process's memory for the request either way.
    const key = `${token}|${organizationId ?? ''}|${twinId ?? ''}`;
    // Without the cache nothing is shared either: each request asks the database itself.
    if (!this.answering) return this.query(token, key, organizationId, twinId);
    const now = Date.now();
    const entry = this.entries.get(key);
    if (entry && now < entry.expiresAt && now - entry.cachedAt < MAX_AGE_MS) {
      // A failed refresh leaves the entry to its age; the request it would have failed has its answer.
      if (now - entry.cachedAt >= REFRESH_AFTER_MS && !this.inFlight.has(key)) this.lookUp(token, key, organizationId, twinId).catch(() => undefined);
      return entry.credentials;
    }
    return this.inFlight.get(key) ?? this.lookUp(token, key, organizationId, twinId);
  }

  /** The one credentials query of a key, shared by the requests that miss while it is in flight (cache on only). */
  private lookUp(token: string, key: string, organizationId: string | undefined, twinId: string | undefined): Promise<ResolvedCredentials | undefined> {
    const lookup = this.query(token, key, organizationId, twinId).finally(() => {
      if (this.inFlight.get(key) === lookup) this.inFlight.delete(key);
    });
    this.inFlight.set(key, lookup);
    return lookup;
  }

  /** Asks the database; a complete success is kept, anything else drops what was kept for the key. */
  private async query(token: string, key: string, organizationId: string | undefined, twinId: string | undefined): Promise<ResolvedCredentials | undefined> {
    const generation = this.generation;
    const cachedAt = Date.now();
    const resolved = await this.repository.resolve(hashToken(token), organizationId, twinId);
    const complete = resolved && (organizationId === undefined || resolved.organization) && (twinId === undefined || resolved.twin);
    if (this.answering && generation === this.generation) {
      if (!complete) this.entries.delete(key);
      else {
        if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
        this.entries.set(key, { credentials: resolved, cachedAt, expiresAt: resolved.expires ? Math.floor(Date.parse(resolved.expires)) : Infinity });
      }
    }
    return resolved;
  }

  /** Empties the cache (a credential changed). */
  forget(): void {
    this.generation++;
    this.entries.clear();
    this.inFlight.clear();
  }
}
