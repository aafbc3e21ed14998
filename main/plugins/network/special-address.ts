import { BlockList, isIPv4 } from 'node:net';

/**
 * Addresses a plugin may reach only when its allow-list names them: this machine, the local
 * network, and addresses that are no single host. A public name that resolves into one of these
 * ranges (DNS pointing at 127.0.0.1 or at the router) is how an allow-list would be stepped around.
 */
const RANGES: readonly [string, number, 'ipv4' | 'ipv6', string][] = [
  ['0.0.0.0', 8, 'ipv4', 'unspecified'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['100.64.0.0', 10, 'ipv4', 'private (shared address space)'],
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['169.254.0.0', 16, 'ipv4', 'link-local'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.0.0.0', 24, 'ipv4', 'reserved'],
  ['192.168.0.0', 16, 'ipv4', 'private'],
  ['198.18.0.0', 15, 'ipv4', 'private (benchmarking)'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved'],
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  ['64:ff9b:1::', 48, 'ipv6', 'private (local-use NAT64)'],
  ['fc00::', 7, 'ipv6', 'private (unique local)'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['ff00::', 8, 'ipv6', 'multicast'],
];

const lists = RANGES.map(([net, prefix, family, kind]) => {
  const list = new BlockList();
  list.addSubnet(net, prefix, family);
  return { list, family, kind };
});

/** What kind of special address `address` is ('loopback', 'private', …), or null for a public one. */
export function specialRange(address: string): string | null {
  const v4 = isIPv4(address) ? address : asIPv4(address);
  const family = v4 ? 'ipv4' : 'ipv6';
  const plain = v4 ?? address;
  for (const { list, family: f, kind } of lists) if (f === family && list.check(plain, family)) return kind;
  return null;
}

/**
 * The IPv4 address an IPv6 one stands for, or null: `::ffff:127.0.0.1` (and its hex form) is
 * 127.0.0.1 to the kernel, and `64:ff9b::a00:5` is 10.0.0.5 behind a NAT64 gateway (DNS64 writes
 * a name's A record so on an IPv6-only network).
 */
export function asIPv4(address: string): string | null {
  const m = /^(::ffff|64:ff9b:):(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i.exec(address);
  if (!m) return null;
  if (m[2]) return m[2];
  const hi = parseInt(m[3]!, 16);
  const lo = parseInt(m[4]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}
