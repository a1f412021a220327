import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP, isIPv4 } from 'node:net';

/**
 * Keeps webhook deliveries away from the instance's own network (SSRF). A receiver's host name is
 * resolved once, EVERY address it resolves to is checked, and the request is then made to the checked
 * address (src/webhooks/deliver.ts pins it), so a DNS answer that changes between check and connect
 * (DNS rebinding) cannot redirect the request.
 *
 * Refused unless WEBHOOK_ALLOW_PRIVATE=true: loopback, private (RFC 1918), carrier-grade NAT,
 * link-local, multicast, unspecified, IPv6 unique-local and site-local, and reserved/documentation
 * ranges. IPv4 embedded in IPv6 (mapped ::ffff:a.b.c.d, compatible ::a.b.c.d, NAT64 64:ff9b::/96,
 * 6to4 2002::/16) is judged as the IPv4 address it stands for.
 *
 * Refused ALWAYS, even with WEBHOOK_ALLOW_PRIVATE=true: cloud metadata endpoints (169.254.169.254,
 * fd00:ec2::254, 100.100.100.200, 192.0.0.192, AWS's container credentials at 169.254.170.2,
 * 169.254.170.23 and fd00:ec2::23, and names such as metadata.google.internal). Allowing
 * private receivers is for a home or office network; no receiver legitimately lives there, and it is
 * where cloud credentials are served.
 */

export type AddressKind =
  | 'public'
  | 'loopback'
  | 'private'
  | 'carrier-grade NAT'
  | 'link-local'
  | 'cloud metadata'
  | 'multicast'
  | 'unspecified'
  | 'unique-local'
  | 'reserved';

interface Range {
  bytes: number[];
  bits: number;
  kind: Exclude<AddressKind, 'public'>;
}

const v4 = (cidr: string, kind: Range['kind']): Range => {
  const [address, bits] = cidr.split('/') as [string, string];
  return { bytes: address.split('.').map(Number), bits: Number(bits), kind };
};

// Most specific first: the first match wins.
const ipv4Ranges: Range[] = [
  v4('169.254.169.254/32', 'cloud metadata'), // AWS, GCP, Azure, OpenStack, DigitalOcean, …
  v4('100.100.100.200/32', 'cloud metadata'), // Alibaba Cloud
  v4('192.0.0.192/32', 'cloud metadata'), // Oracle Cloud
  v4('169.254.170.2/32', 'cloud metadata'), // AWS ECS task metadata and credentials
  v4('169.254.170.23/32', 'cloud metadata'), // AWS EKS Pod Identity credentials
  v4('0.0.0.0/8', 'unspecified'),
  v4('10.0.0.0/8', 'private'),
  v4('100.64.0.0/10', 'carrier-grade NAT'),
  v4('127.0.0.0/8', 'loopback'),
  v4('169.254.0.0/16', 'link-local'),
  v4('172.16.0.0/12', 'private'),
  v4('192.0.0.0/24', 'reserved'),
  v4('192.0.2.0/24', 'reserved'),
  v4('192.88.99.0/24', 'reserved'),
  v4('192.168.0.0/16', 'private'),
  v4('198.18.0.0/15', 'reserved'),
  v4('198.51.100.0/24', 'reserved'),
  v4('203.0.113.0/24', 'reserved'),
  v4('224.0.0.0/4', 'multicast'),
  v4('240.0.0.0/4', 'reserved'), // includes the broadcast address 255.255.255.255
];

/** IPv6 address text to its 16 bytes; null when it is not one. Accepts a zone (`%eth0`) and a trailing dotted quad. */
export function parseIPv6(text: string): number[] | null {
  let address = text.trim().toLowerCase();
  if (address.startsWith('[') && address.endsWith(']')) address = address.slice(1, -1);
  const zone = address.indexOf('%');
  if (zone >= 0) address = address.slice(0, zone);
  if (isIP(address) !== 6) return null;
  let tail: number[] = [];
  const lastColon = address.lastIndexOf(':');
  const last = address.slice(lastColon + 1);
  if (last.includes('.')) {
    tail = last.split('.').map(Number);
    address = address.slice(0, lastColon + 1) + '0:0';
  }
  const halves = address.split('::');
  const groups = (part: string | undefined) => (part ? part.split(':').filter((g) => g !== '') : []);
  const head = groups(halves[0]);
  const rest = halves.length > 1 ? groups(halves[1]) : [];
  const missing = 8 - head.length - rest.length;
  const all = [...head, ...Array<string>(Math.max(0, missing)).fill('0'), ...rest];
  const bytes: number[] = [];
  for (const group of all) {
    const value = Number.parseInt(group, 16);
    bytes.push(value >> 8, value & 0xff);
  }
  if (tail.length === 4) bytes.splice(12, 4, ...tail);
  return bytes.length === 16 ? bytes : null;
}

function matches(bytes: number[], range: Range): boolean {
  let bits = range.bits;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if (((bytes[i] ?? 0) & mask) !== ((range.bytes[i] ?? 0) & mask)) return false;
  }
  return true;
}

function classifyIPv4Bytes(bytes: number[]): AddressKind {
  return ipv4Ranges.find((r) => matches(bytes, r))?.kind ?? 'public';
}

const v6 = (cidr: string, kind: Range['kind']): Range => {
  const [address, bits] = cidr.split('/') as [string, string];
  return { bytes: parseIPv6(address)!, bits: Number(bits), kind };
};

const ipv6Ranges: Range[] = [
  v6('fd00:ec2::254/128', 'cloud metadata'), // AWS (IPv6 instance metadata)
  v6('fd00:ec2::23/128', 'cloud metadata'), // AWS EKS Pod Identity credentials (IPv6)
  v6('::/128', 'unspecified'),
  v6('::1/128', 'loopback'),
  v6('64:ff9b:1::/48', 'private'), // local-use NAT64
  v6('100::/64', 'reserved'), // discard-only
  v6('2001::/32', 'reserved'), // Teredo
  v6('2001:db8::/32', 'reserved'), // documentation
  v6('fc00::/7', 'unique-local'),
  v6('fe80::/10', 'link-local'),
  v6('fec0::/10', 'private'), // deprecated site-local
  v6('ff00::/8', 'multicast'),
];

const embeddedIPv4: Array<{ range: Range; at: number }> = [
  { range: v6('::ffff:0:0/96', 'reserved'), at: 12 }, // IPv4-mapped
  { range: v6('64:ff9b::/96', 'reserved'), at: 12 }, // NAT64 well-known prefix
  { range: v6('2002::/16', 'reserved'), at: 2 }, // 6to4
];

/** What kind of address this is (IPv4 or IPv6 text; IPv4 embedded in IPv6 is judged as IPv4). */
export function classifyAddress(address: string): AddressKind {
  const text = address.trim();
  if (isIPv4(text)) return classifyIPv4Bytes(text.split('.').map(Number));
  const bytes = parseIPv6(text);
  if (!bytes) throw new Error(`Not an IP address: ${address}`);
  for (const { range, at } of embeddedIPv4) {
    if (matches(bytes, range)) return classifyIPv4Bytes(bytes.slice(at, at + 4));
  }
  const direct = ipv6Ranges.find((r) => matches(bytes, r));
  if (direct) return direct.kind;
  // ::/96 (deprecated IPv4-compatible) and the rest of ::/8 are not routable receivers.
  if (bytes.slice(0, 12).every((b) => b === 0) || bytes[0] === 0) return 'reserved';
  return 'public';
}

const metadataNames = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'metadata.azure.internal',
  'instance-data',
  'instance-data.ec2.internal',
  'metadata.tencentyun.com',
  'metadata.platformequinix.com',
]);

/** Lower case, without brackets around an IPv6 literal and without trailing dots. */
export function normalizeHost(host: string): string {
  let name = host.trim().toLowerCase();
  if (name.startsWith('[') && name.endsWith(']')) name = name.slice(1, -1);
  return name.replace(/\.+$/, '');
}

export function isMetadataHostName(host: string): boolean {
  return metadataNames.has(normalizeHost(host));
}

/** `<subject>, a <kind> address; <why>` */
function describe(subject: string, kind: AddressKind): string {
  if (kind === 'cloud metadata') return `${subject}, a cloud metadata address; webhook receivers there are always refused`;
  const article = kind === 'unspecified' ? 'an' : 'a';
  return `${subject}, ${article} ${kind} address; webhook receivers must be on public addresses (WEBHOOK_ALLOW_PRIVATE=true allows loopback and private ones)`;
}

/** Why an address may not receive webhooks, or null when it may. */
export function addressRefusal(address: string, allowPrivate: boolean): { kind: AddressKind; reason: string } | null {
  const kind = classifyAddress(address);
  if (kind === 'public' || (allowPrivate && kind !== 'cloud metadata')) return null;
  return { kind, reason: describe(address, kind) };
}

/**
 * A receiver the guard refuses. `byName`: refused for what its name resolved to, which its owner
 * did not write and may not learn (an internal name's existence); otherwise for the host as written.
 */
export class ReceiverRefusedError extends Error {
  readonly host: string;
  readonly byName: boolean;
  constructor(host: string, message: string, byName = false) {
    super(message);
    this.name = 'ReceiverRefusedError';
    this.host = host;
    this.byName = byName;
  }
}

/**
 * The check possible without DNS, for when a webhook is created or changed: a metadata name, or an
 * IP literal the guard refuses. Names are resolved and checked at each delivery.
 */
export function hostRefusal(host: string, allowPrivate: boolean): string | null {
  const name = normalizeHost(host);
  if (metadataNames.has(name)) return `${name} is a cloud metadata host; webhook receivers there are always refused`;
  // Always this machine (RFC 6761), whatever the resolver says: refused when the URL is given, not
  // at every delivery after a 201.
  if (!allowPrivate && (name === 'localhost' || name.endsWith('.localhost'))) return describe(`${name}, always this machine`, 'loopback');
  if (isIP(name) || parseIPv6(name)) return addressRefusal(name, allowPrivate)?.reason ?? null;
  return null;
}

export interface VettedAddress {
  address: string;
  family: 4 | 6;
}

export type Lookup = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

const systemLookup: Lookup = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/**
 * Resolves a receiver's host and checks every address. Returns the address to connect to (the first
 * one the resolver gave). Throws ReceiverRefusedError when the guard refuses the host or any of its
 * addresses, and the resolver's error (e.g. ENOTFOUND) when it cannot be resolved.
 */
export async function resolveReceiver(host: string, options: { allowPrivate: boolean; lookup?: Lookup }): Promise<VettedAddress> {
  const name = normalizeHost(host);
  const literalRefusal = hostRefusal(name, options.allowPrivate);
  if (literalRefusal) throw new ReceiverRefusedError(name, `Refused to deliver: ${literalRefusal}`);
  const literal = isIP(name);
  if (literal) return { address: name, family: literal as 4 | 6 };

  const addresses = await (options.lookup ?? systemLookup)(name);
  if (addresses.length === 0) throw Object.assign(new Error(`${name} has no addresses`), { code: 'ENOTFOUND' });
  for (const { address } of addresses) {
    const refusal = addressRefusal(address, options.allowPrivate);
    if (refusal) throw new ReceiverRefusedError(name, `Refused to deliver: ${describe(`${name} resolves to ${address}`, refusal.kind)}`, true);
  }
  const first = addresses[0]!;
  return { address: first.address, family: first.family === 6 ? 6 : 4 };
}
