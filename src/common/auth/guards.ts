import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { forbidden, invalidHeader, unauthenticated, ApiError } from '../json-api/api-error.js';
import { isUuid } from '../value-checks.js';
import type { ResolvedCredentials } from './auth.repository.js';
import { Credentials } from './credentials.js';
import { RateLimiter } from './rate-limiter.js';
import { ROUTE_ACCESS, RouteAccess } from './route-access.js';
import { parseAuthorization, secretsEqual } from './tokens.js';

// A route's access marker never changes after start-up: read once per handler, not by three guards
// on every request (a metadata walk up the prototype chain each time).
const accessByHandler = new WeakMap<object, RouteAccess>();
const routeAccess = (reflector: Reflector, context: ExecutionContext): RouteAccess => {
  const handler = context.getHandler();
  let access = accessByHandler.get(handler);
  if (access === undefined) {
    access = reflector.getAllAndOverride<RouteAccess>(ROUTE_ACCESS, [handler, context.getClass()]) ?? {};
    accessByHandler.set(handler, access);
  }
  return access;
};

function authenticate(request: FastifyRequest, credentials: ResolvedCredentials | undefined): true {
  if (!credentials) throw unauthenticated('The access token is unknown, revoked or expired.');
  request.auth = credentials;
  return true;
}

const requestOf = (context: ExecutionContext) => context.getArgByIndex<FastifyRequest>(0);

const headerValue = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name];
  return typeof value === 'string' ? value.trim() : undefined;
};

/**
 * 1. Who is calling. Resolves `Authorization: Token …` (and, in the same query, the membership and
 * acting twin named by the tenant headers) and stores the result on the request. Failing here is
 * always 401: the caller is not known, so nothing else about the request is judged.
 */
@Injectable()
export class TokenGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly credentials: Credentials,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  // Not async: with the credentials cached the answer is synchronous, and Nest then awaits nothing.
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const access = routeAccess(this.reflector, context);
    if (access.public) return true;
    const request = requestOf(context);
    const token = parseAuthorization(request.headers.authorization);
    if (access.admin) return this.checkAdmin(token);
    if (!token) {
      throw unauthenticated(
        request.headers.authorization === undefined
          ? 'Send "Authorization: Token <ACCESS_TOKEN>".'
          : 'The Authorization header must be "Token <ACCESS_TOKEN>".',
      );
    }
    const organizationId = headerValue(request, 'x-organization');
    const twinId = access.twin ? headerValue(request, 'x-twin') : undefined;
    const resolved = this.credentials.resolve(token, isUuid(organizationId) ? organizationId : undefined, isUuid(twinId) ? twinId : undefined);
    return resolved instanceof Promise ? resolved.then((credentials) => authenticate(request, credentials)) : authenticate(request, resolved);
  }

  private checkAdmin(token: string | undefined): boolean {
    const adminToken = this.config.adminToken;
    if (!adminToken) throw new ApiError(403, 'admin_disabled', 'Forbidden', 'The admin API is disabled: ADMIN_TOKEN is not set.');
    if (!token) throw unauthenticated('Send "Authorization: Token <ADMIN_TOKEN>".');
    if (!secretsEqual(token, adminToken)) throw unauthenticated('The admin token is not valid.');
    return true;
  }
}

/**
 * 2. How often: a per-token budget (`RateLimit` / `RateLimit-Policy` on every counted answer), answered
 * with 429 and `Retry-After` when spent. Requests without a user token (public routes, the admin API)
 * are not counted.
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  constructor(private readonly limiter: RateLimiter) {}

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const request = requestOf(context);
    if (!request.auth || !this.limiter.limiting) return true;
    return this.limiter.consume(request, context.getArgByIndex<FastifyReply>(1)).then(() => true);
  }
}

/**
 * 3. In which organization. `X-Organization` must name an organization the account belongs to; one
 * it does not belong to and one that does not exist look the same (403), so ids cannot be probed.
 */
@Injectable()
export class OrganizationGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const access = routeAccess(this.reflector, context);
    if (access.public || access.admin) return true;
    const request = requestOf(context);
    const auth = request.auth!;
    const raw = headerValue(request, 'x-organization');
    if (raw === undefined || raw === '') {
      if (access.organizationOptional) return true;
      throw invalidHeader('X-Organization', 'Send "X-Organization: <ORG_ID>".');
    }
    if (!isUuid(raw)) throw invalidHeader('X-Organization', 'X-Organization must be an organization id (a UUID).');
    if (!auth.organization) {
      throw forbidden('The account is not a member of that organization.', { header: 'X-Organization' });
    }
    auth.tenant = { account: auth.account, organization: auth.organization, tokenId: auth.tokenId };
    return true;
  }
}

/** 4. As which twin. On twin routes `X-Twin` must name a twin of the selected organization. */
@Injectable()
export class TwinGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const access = routeAccess(this.reflector, context);
    if (!access.twin) return true;
    const request = requestOf(context);
    const auth = request.auth!;
    const raw = headerValue(request, 'x-twin');
    if (raw === undefined || raw === '') {
      if (access.twin === 'optional') return true;
      throw invalidHeader('X-Twin', 'Send "X-Twin: <TWIN_ID>" to act as one of the organization\'s twins.');
    }
    if (!isUuid(raw)) throw invalidHeader('X-Twin', 'X-Twin must be a twin id (a UUID).');
    if (!auth.twin) throw forbidden('The twin does not belong to the selected organization.', { header: 'X-Twin' });
    auth.tenant!.twin = auth.twin;
    return true;
  }
}
