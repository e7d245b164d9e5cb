import type { BootstrapResult } from './admin.service.js';

/**
 * What to do next with a fresh tenant, for a person at a terminal: printed by the first start of a new
 * embedded database (its demo tenant) and by `cli bootstrap`, with the address the service really has.
 */
export function firstSteps(tenant: BootstrapResult, baseUrl: string): string[] {
  return [
    `organization  ${tenant.organizationId}`,
    `account       ${tenant.accountId}`,
    `twin          ${tenant.twinId}`,
    `token id      ${tenant.tokenId}`,
    `token         ${tenant.token}   (shown once; keep it)`,
    '',
    `API documentation (Swagger UI): ${baseUrl}/docs   (Authorize with "Token ${tenant.token}" and the organization id)`,
    'Try it:',
    `  curl -H 'Authorization: Token ${tenant.token}' -H 'X-Organization: ${tenant.organizationId}' ${baseUrl}/twins/`,
    `  curl -H 'Authorization: Token ${tenant.token}' -H 'X-Organization: ${tenant.organizationId}' -H 'X-Twin: ${tenant.twinId}' \\`,
    `       -H 'Content-Type: application/vnd.api+json' -d '{"data":{"type":"events","attributes":{"name":"hello","category":"demo","data":{}}}}' ${baseUrl}/events/`,
  ];
}

/** The address to print: PUBLIC_URL when set, else localhost (a wildcard listen address is no URL) and the real port. */
export function localBaseUrl(publicUrl: string | undefined, host: string, port: number): string {
  if (publicUrl) return publicUrl.replace(/\/+$/, '');
  const shown = host === '0.0.0.0' || host === '::' || host === '' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return `http://${shown}:${port}`;
}
