import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { RequestMethod } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { ROUTE_ACCESS, RouteAccess } from '../../src/common/auth/route-access';

export interface RouteInfo {
  method: string;
  /** Full path with `:params`, e.g. `/twins/:twinId`. */
  path: string;
  controller: string;
  handler: string;
  access: RouteAccess;
}

const join = (...parts: (string | undefined)[]) =>
  '/' +
  parts
    .filter((part): part is string => !!part && part !== '/')
    .map((part) => part.replace(/^\/+|\/+$/g, ''))
    .filter(Boolean)
    .join('/');

/**
 * Every route of the running application, read from Nest's own registry (not a hand-kept list), with
 * the access rule its guards enforce. A route added later shows up here automatically.
 */
export function listRoutes(app: NestFastifyApplication): RouteInfo[] {
  const routes: RouteInfo[] = [];
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const type = wrapper.metatype as (new (...args: never[]) => unknown) | undefined;
      if (!type || !wrapper.instance) continue;
      const base = Reflect.getMetadata(PATH_METADATA, type) as string | string[] | undefined;
      const classAccess = (Reflect.getMetadata(ROUTE_ACCESS, type) as RouteAccess | undefined) ?? {};
      const prototype = type.prototype as Record<string, unknown>;
      for (const name of Object.getOwnPropertyNames(prototype)) {
        const handler = prototype[name];
        if (name === 'constructor' || typeof handler !== 'function') continue;
        const path = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
        const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
        if (path === undefined || method === undefined) continue;
        const access = (Reflect.getMetadata(ROUTE_ACCESS, handler) as RouteAccess | undefined) ?? classAccess;
        for (const prefix of Array.isArray(base) ? base : [base]) {
          for (const suffix of Array.isArray(path) ? path : [path]) {
            routes.push({ method: RequestMethod[method], path: join(prefix, suffix), controller: type.name, handler: name, access });
          }
        }
      }
    }
  }
  return routes.sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
}

/** One readable line per route: what a reviewer checks when permissions change. */
export function describeAccess(route: RouteInfo): string {
  const { access } = route;
  let rule: string;
  if (access.public) rule = 'public';
  else if (access.admin) rule = 'admin token';
  else {
    rule = 'token';
    rule += access.organizationOptional ? ' + X-Organization (optional)' : ' + X-Organization';
    if (access.twin === 'required') rule += ' + X-Twin';
    if (access.twin === 'optional') rule += ' + X-Twin (optional)';
  }
  return `${route.method.padEnd(6)} ${route.path.padEnd(40)} ${rule}`;
}
