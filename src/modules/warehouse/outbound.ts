/**
 * The warehouse's outbound policy (issue 27): which hosts a connection may reach. One guard, called before any
 * connector opens a socket, resolves the host a connection names, checks every address it resolves to, and hands the
 * driver a lookup pinned to those addresses, so a second DNS answer cannot differ from the one checked (DNS
 * rebinding). Its failures are WarehouseErrors with fixed messages (address_not_allowed, host_not_found).
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { BlockList, isIP } from 'node:net';
import { refusal, WarehouseError } from './connectors/types.js';

export interface OutboundConfig {
  /** WAREHOUSE_ALLOWED_HOSTS, parsed: host names (`*.` for subdomains), IPs and CIDRs; undefined allows any. */
  allowedHosts: string[] | undefined;
  /** WAREHOUSE_BLOCK_PRIVATE_NETWORKS: loopback, RFC 1918, CGNAT, ULA and the like are refused too. */
  blockPrivateNetworks: boolean;
}

/** The host a connection reaches and the addresses it was checked at: the only ones its sockets may use. */
export interface CheckedHost {
  host: string;
  addresses: Array<{ address: string; family: 4 | 6 }>;
}

/** Cloud metadata services by name (AWS, Google, the short forms their resolvers answer). */
const METADATA_HOSTS = new Set(['metadata', 'metadata.google.internal', 'metadata.goog', 'instance-data', 'instance-data.ec2.internal']);

function blockList(v4: string[], v6: string[]): BlockList {
  const list = new BlockList();
  for (const cidr of v4) list.addSubnet(cidr.split('/')[0], Number(cidr.split('/')[1]), 'ipv4');
  for (const cidr of v6) list.addSubnet(cidr.split('/')[0], Number(cidr.split('/')[1]), 'ipv6');
  return list;
}

/**
 * Always refused: link-local (where every cloud's metadata service lives), AWS's IPv6 metadata address, Alibaba's
 * metadata address, and what is not unicast (multicast, reserved, broadcast).
 */
const NEVER = blockList(
  ['169.254.0.0/16', '100.100.100.200/32', '224.0.0.0/4', '240.0.0.0/4'],
  ['fe80::/10', 'fd00:ec2::254/128', 'ff00::/8'],
);

/** Refused with WAREHOUSE_BLOCK_PRIVATE_NETWORKS: this host, private and shared address space. */
const PRIVATE = blockList(
  ['0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '172.16.0.0/12', '192.0.0.0/24', '192.168.0.0/16', '198.18.0.0/15'],
  ['::/128', '::1/128', 'fc00::/7', 'fec0::/10'],
);

/**
 * The IPv4 address an IPv6 address carries, for the forms that reach it: IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible
 * (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d). Each is checked as the IPv4 address it reaches.
 */
export function embeddedIpv4(address: string): string | undefined {
  const words = ipv6Words(address);
  if (!words) return undefined;
  const head = words.slice(0, 6);
  const zero = (ws: number[]) => ws.every((w) => w === 0);
  const mapped = zero(head.slice(0, 5)) && head[5] === 0xffff;
  const compatible = zero(head) && (words[6] !== 0 || words[7] > 1);
  const nat64 = head[0] === 0x64 && head[1] === 0xff9b && zero(head.slice(2));
  if (!mapped && !compatible && !nat64) return undefined;
  return [words[6] >> 8, words[6] & 0xff, words[7] >> 8, words[7] & 0xff].join('.');
}

/** The eight 16-bit words of an IPv6 address (with or without a dotted IPv4 tail), or undefined when it is not one. */
function ipv6Words(address: string): number[] | undefined {
  if (isIP(address) !== 6) return undefined;
  let text = address.toLowerCase().split('%')[0];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1].split('.').map(Number);
    text = `${text.slice(0, -dotted[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [left, right] = text.includes('::') ? text.split('::') : [text, undefined];
  const parse = (part: string | undefined) => (part ? part.split(':').map((w) => parseInt(w, 16)) : []);
  const head = parse(left);
  const tail = parse(right);
  const fill = right === undefined ? [] : new Array<number>(8 - head.length - tail.length).fill(0);
  return [...head, ...fill, ...tail];
}

/** True when the policy refuses an address whatever the allow-list says. */
export function addressRefused(address: string, blockPrivateNetworks: boolean): boolean {
  const v4 = isIP(address) === 4 ? address : embeddedIpv4(address);
  const checks: Array<[string, 'ipv4' | 'ipv6']> = v4 ? [[v4, 'ipv4']] : [];
  if (isIP(address) === 6) checks.push([address.split('%')[0], 'ipv6']);
  return checks.some(([a, type]) => NEVER.check(a, type) || (blockPrivateNetworks && PRIVATE.check(a, type)));
}

/** A host name as compared: lower case, no trailing dot, an IPv6 literal without its brackets. */
export function normaliseHost(host: string): string {
  const bare = host.trim().toLowerCase().replace(/\.$/, '');
  return bare.startsWith('[') && bare.endsWith(']') ? bare.slice(1, -1) : bare;
}

/** Matches hosts and addresses against WAREHOUSE_ALLOWED_HOSTS. */
function allowList(entries: string[]) {
  const names = entries.filter((e) => isIP(e) === 0 && !e.includes('/'));
  const networks = new BlockList();
  for (const entry of entries) {
    const [address, prefix] = entry.split('/');
    if (isIP(address) === 0) continue;
    const type = isIP(address) === 4 ? 'ipv4' : 'ipv6';
    networks.addSubnet(address, prefix === undefined ? (type === 'ipv4' ? 32 : 128) : Number(prefix), type);
  }
  return {
    /** A host name listed itself, or under a listed `*.domain`. */
    names: (host: string) => names.some((n) => (n.startsWith('*.') ? host.endsWith(n.slice(1)) && host.length > n.length - 1 : host === n)),
    address: (address: string) => {
      const v4 = isIP(address) === 4 ? address : embeddedIpv4(address);
      return (v4 !== undefined && networks.check(v4, 'ipv4')) || (isIP(address) === 6 && networks.check(address.split('%')[0], 'ipv6'));
    },
  };
}

export type Resolver = (host: string) => Promise<Array<{ address: string; family: number }>>;

const systemResolver: Resolver = (host) => dnsLookup(host, { all: true, verbatim: true });

export type OutboundGuard = ReturnType<typeof createOutboundGuard>;

export function createOutboundGuard(config: OutboundConfig, resolve: Resolver = systemResolver) {
  const allowed = config.allowedHosts ? allowList(config.allowedHosts) : undefined;
  const notAllowed = () => refusal('address_not_allowed');

  return {
    /**
     * Resolves `host` and checks it and every address it resolves to; refuses before any socket is opened. A metadata
     * host name is refused by name, before DNS. Every address must pass, so the pinned lookup may use any of them.
     */
    async check(rawHost: string): Promise<CheckedHost> {
      const host = normaliseHost(rawHost);
      if (!host || METADATA_HOSTS.has(host)) throw notAllowed();
      const family = isIP(host);
      let addresses: CheckedHost['addresses'];
      if (family) addresses = [{ address: host, family: family as 4 | 6 }];
      else {
        try {
          addresses = (await resolve(host)).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
        } catch {
          throw refusal('host_not_found');
        }
        if (addresses.length === 0) throw refusal('host_not_found');
      }
      if (addresses.some((a) => addressRefused(a.address, config.blockPrivateNetworks))) throw notAllowed();
      if (allowed && !allowed.names(host) && !addresses.every((a) => allowed.address(a.address))) throw notAllowed();
      return { host, addresses };
    },
  };
}

/**
 * A lookup for sockets (net.connect, http.Agent) that answers only for the checked host, with the addresses checked:
 * the driver connects where the guard looked, whatever DNS answers next. Any other name is refused.
 */
export function pinnedLookup(checked: CheckedHost): LookupFunction {
  return (hostname, options, callback) => {
    const done = callback as (error: NodeJS.ErrnoException | null, address: string | Array<{ address: string; family: number }>, family?: number) => void;
    if (normaliseHost(hostname) !== checked.host) {
      done(refusal('address_not_allowed') as WarehouseError & NodeJS.ErrnoException, '');
      return;
    }
    const wanted = typeof options === 'object' && options?.family ? Number(options.family) : 0;
    const usable = checked.addresses.filter((a) => !wanted || a.family === wanted);
    if (usable.length === 0) {
      done(Object.assign(new Error('no address of the family asked for'), { code: 'ENOTFOUND' }), '');
      return;
    }
    if (typeof options === 'object' && options?.all) done(null, usable);
    else done(null, usable[0].address, usable[0].family);
  };
}
