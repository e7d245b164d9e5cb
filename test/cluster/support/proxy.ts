import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The recommended proxy configuration kept in the repository; the test runs exactly this file. */
export const SITE_CONFIG = join(__dirname, '..', '..', '..', 'deploy', 'nginx', 'twin-service.conf');

/**
 * The repository's site file with the example upstream servers replaced by `ports` (keeping each
 * line's parameters) and the listen directive bound to 127.0.0.1:`listen`: the `site` the cluster
 * test gives NginxProcess (test/faults/support/nginx.ts). Fails if the file no longer
 * has the shape this relies on, so the test cannot silently run some other configuration.
 */
export function siteConfig(listen: number, ports: number[]): string {
  const text = readFileSync(SITE_CONFIG, 'utf8');
  const servers = [...text.matchAll(/^(\s*)server 127\.0\.0\.1:\d+( [^;]*)?;$/gm)];
  if (servers.length === 0 || !/^\s*listen 80;$/m.test(text)) throw new Error(`${SITE_CONFIG}: no upstream server lines or no "listen 80;"`);
  const [indent, parameters = ''] = [servers[0][1], servers[0][2]];
  const upstream = ports.map((port) => `${indent}server 127.0.0.1:${port}${parameters};`).join('\n');
  let replaced = false;
  return text
    .replace(/^\s*server 127\.0\.0\.1:\d+( [^;]*)?;\n/gm, () => (replaced ? '' : ((replaced = true), `${upstream}\n`)))
    .replace(/^(\s*)listen 80;$/m, `$1listen 127.0.0.1:${listen};`);
}
