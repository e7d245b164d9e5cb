import { BlockList, isIP } from 'node:net';

/**
 * Which addresses a webhook may reach (docs/WEBHOOKS.md, "Addresses"): public unicast only. Everything
 * a partner could use to make the service call into its own network or its cloud's metadata service is
 * refused: private, loopback, link-local (169.254.169.254 included), carrier-grade NAT, unspecified,
 * multicast, reserved and documentation ranges, and IPv6 forms that embed an IPv4 address the IPv4
 * rules cannot see through (NAT64, 6to4). IPv4-mapped IPv6 addresses are judged as their IPv4 address
 * (BlockList does that).
 */
const REFUSED: [string, number, 'ipv4' | 'ipv6'][] = [
  ['0.0.0.0', 8, 'ipv4'],
  ['10.0.0.0', 8, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'],
  ['127.0.0.0', 8, 'ipv4'],
  ['169.254.0.0', 16, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.0.0.0', 24, 'ipv4'],
  ['192.0.2.0', 24, 'ipv4'],
  ['192.88.99.0', 24, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['198.18.0.0', 15, 'ipv4'],
  ['198.51.100.0', 24, 'ipv4'],
  ['203.0.113.0', 24, 'ipv4'],
  ['224.0.0.0', 4, 'ipv4'],
  ['240.0.0.0', 4, 'ipv4'],
  ['::', 128, 'ipv6'],
  ['::1', 128, 'ipv6'],
  // IPv4-compatible (deprecated) addresses, ::a.b.c.d.
  ['::', 96, 'ipv6'],
  ['64:ff9b::', 96, 'ipv6'],
  ['64:ff9b:1::', 48, 'ipv6'],
  ['100::', 64, 'ipv6'],
  ['2001::', 23, 'ipv6'],
  ['2001:db8::', 32, 'ipv6'],
  ['2002::', 16, 'ipv6'],
  ['3fff::', 20, 'ipv6'],
  ['fc00::', 7, 'ipv6'],
  ['fe80::', 10, 'ipv6'],
  ['fec0::', 10, 'ipv6'],
  ['ff00::', 8, 'ipv6'],
];

const refused = new BlockList();
for (const [network, prefix, family] of REFUSED) refused.addSubnet(network, prefix, family);

/** Whether `address` (an IP literal) is a public unicast address a webhook may be delivered to. */
export function isPublicAddress(address: string): boolean {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const family = isIP(bare);
  if (family === 0) return false;
  // A zone index (fe80::1%eth0) only exists on link-local addresses.
  if (bare.includes('%')) return false;
  return !refused.check(bare, family === 4 ? 'ipv4' : 'ipv6');
}

/** Why a webhook URL cannot be used, or undefined when its form is acceptable (its addresses are checked apart). */
export function urlProblem(raw: string, allowPrivate: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'url must be an absolute URL';
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) return 'url must use https';
  if (url.username || url.password) return 'url must not contain credentials';
  if (!url.hostname) return 'url must name a host';
  return undefined;
}

/** The host of a URL as DNS or an IP literal check needs it (IPv6 literals without brackets). */
export function hostOf(url: URL): string {
  const host = url.hostname;
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}
