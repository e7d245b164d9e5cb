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
 */
@Injectable()
export class Credentials implements OnModuleInit {
  private readonly entries = new Map<string, Entry>();
  private answering = false;
  /** Bumped by every `forget`: a query that was in flight across one must not fill the cache. */
  private generation = 0;

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
    const now = Date.now();
    if (this.answering) {
      const entry = this.entries.get(key);
      if (entry && now < entry.expiresAt && now - entry.cachedAt < MAX_AGE_MS) return entry.credentials;
    }
    return this.lookUp(token, key, now, organizationId, twinId);
  }

  private async lookUp(token: string, key: string, now: number, organizationId: string | undefined, twinId: string | undefined): Promise<ResolvedCredentials | undefined> {
    const generation = this.generation;
    const resolved = await this.repository.resolve(hashToken(token), organizationId, twinId);
    const complete = resolved && (organizationId === undefined || resolved.organization) && (twinId === undefined || resolved.twin);
    if (complete && this.answering && generation === this.generation) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
      this.entries.set(key, { credentials: resolved, cachedAt: now, expiresAt: resolved.expires ? Math.floor(Date.parse(resolved.expires)) : Infinity });
    }
    return resolved;
  }

  /** Empties the cache (a credential changed). */
  forget(): void {
    this.generation++;
    this.entries.clear();
  }
}
