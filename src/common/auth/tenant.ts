import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

/**
 * Who is calling and in which context: resolved once per request by the token guard, checked by the
 * organization and twin guards, and handed to every service and repository method as its first
 * argument.
 */
export interface Tenant {
  account: { id: string; name: string };
  organization: { id: string; name: string };
  /** The acting twin (`X-Twin`), on routes that act as one. */
  twin?: { id: string };
  tokenId: string;
}

/** A tenant on a route that acts as a twin (`@ActsAsTwin()`): the twin is always there. */
export interface TwinTenant extends Tenant {
  twin: { id: string };
}

/** What the token guard learned about the request, before the other guards judged it. */
export interface RequestAuth {
  tokenId: string;
  account: { id: string; name: string };
  /** The organization named by `X-Organization`, when the account is a member of it. */
  organization?: { id: string; name: string };
  /** The twin named by `X-Twin`, when it belongs to that organization. */
  twin?: { id: string };
  /** Set once the organization guard accepted the request. */
  tenant?: Tenant;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth?: RequestAuth;
  }
}

/** `@Tenant()`: the caller's `{account, organization, twin?}`, as the guards accepted it. */
export const Tenant = createParamDecorator((_: unknown, context: ExecutionContext): Tenant => {
  const tenant = context.switchToHttp().getRequest<FastifyRequest>().auth?.tenant;
  if (!tenant) throw new Error('@Tenant() used on a route without an organization context');
  return tenant;
});

/** `@Caller()`: the authenticated account, on routes where the organization is optional. */
export const Caller = createParamDecorator((_: unknown, context: ExecutionContext): RequestAuth => {
  const auth = context.switchToHttp().getRequest<FastifyRequest>().auth;
  if (!auth) throw new Error('@Caller() used on a public route');
  return auth;
});
