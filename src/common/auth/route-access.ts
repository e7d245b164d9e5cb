import { SetMetadata } from '@nestjs/common';

/**
 * How a route is authorised. Guards are global and deny by default: a route without a marker needs a
 * valid token and an organization the account belongs to.
 */
export const ROUTE_ACCESS = 'twin-service:route-access';

export interface RouteAccess {
  /** No credentials at all (health, docs). */
  public?: boolean;
  /** Operators only: `Authorization: Token <ADMIN_TOKEN>`, no organization. */
  admin?: boolean;
  /** `X-Organization` may be omitted (listing one's own organizations). */
  organizationOptional?: boolean;
  /** `required`: the route acts as the `X-Twin` twin; `optional`: a given `X-Twin` is checked and used. */
  twin?: 'required' | 'optional';
}

export const Public = () => SetMetadata(ROUTE_ACCESS, { public: true } satisfies RouteAccess);
export const AdminApi = () => SetMetadata(ROUTE_ACCESS, { admin: true } satisfies RouteAccess);
export const OrganizationOptional = () => SetMetadata(ROUTE_ACCESS, { organizationOptional: true } satisfies RouteAccess);
export const ActsAsTwin = (mode: 'required' | 'optional' = 'required') => SetMetadata(ROUTE_ACCESS, { twin: mode } satisfies RouteAccess);
