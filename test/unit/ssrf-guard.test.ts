import { describe, expect, it } from 'vitest';
import { addressRefusal, classifyAddress, hostRefusal, parseIPv6, ReceiverRefusedError, resolveReceiver, type AddressKind } from '../../src/webhooks/ssrf-guard.ts';

/** Every address class in IPv4, IPv6 and the IPv4-in-IPv6 forms. */
const cases: Array<[string, AddressKind]> = [
  // Loopback.
  ['127.0.0.1', 'loopback'],
  ['127.255.10.3', 'loopback'],
  ['::1', 'loopback'],
  ['0:0:0:0:0:0:0:1', 'loopback'],
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['0:0:0:0:0:ffff:7f00:0001', 'loopback'],
  ['64:ff9b::127.0.0.1', 'loopback'],
  ['2002:7f00:1::', 'loopback'],
  // Private (RFC 1918), IPv6 site-local and local-use NAT64.
  ['10.0.0.1', 'private'],
  ['10.255.255.255', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.254', 'private'],
  ['192.168.1.20', 'private'],
  ['::ffff:10.1.2.3', 'private'],
  ['::ffff:172.20.0.1', 'private'],
  ['::ffff:c0a8:0101', 'private'],
  ['fec0::1', 'private'],
  ['64:ff9b:1::a', 'private'],
  // Carrier-grade NAT.
  ['100.64.0.1', 'carrier-grade NAT'],
  ['100.127.255.255', 'carrier-grade NAT'],
  ['::ffff:100.100.1.1', 'carrier-grade NAT'],
  // Link-local.
  ['169.254.1.1', 'link-local'],
  ['::ffff:169.254.0.5', 'link-local'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local'],
  ['febf:ffff::1', 'link-local'],
  // Cloud metadata.
  ['169.254.169.254', 'cloud metadata'],
  ['::ffff:169.254.169.254', 'cloud metadata'],
  ['::ffff:a9fe:a9fe', 'cloud metadata'],
  ['fd00:ec2::254', 'cloud metadata'],
  ['100.100.100.200', 'cloud metadata'],
  ['192.0.0.192', 'cloud metadata'],
  ['169.254.170.2', 'cloud metadata'],
  ['169.254.170.23', 'cloud metadata'],
  ['fd00:ec2::23', 'cloud metadata'],
  ['169.254.170.3', 'link-local'],
  // Multicast.
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['::ffff:224.0.0.251', 'multicast'],
  ['ff02::1', 'multicast'],
  ['ff05::2', 'multicast'],
  // Unspecified.
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['::', 'unspecified'],
  ['::ffff:0.0.0.0', 'unspecified'],
  // Unique-local IPv6.
  ['fc00::1', 'unique-local'],
  ['fd12:3456:789a::1', 'unique-local'],
  // Reserved and documentation ranges.
  ['192.0.2.10', 'reserved'],
  ['198.51.100.7', 'reserved'],
  ['203.0.113.99', 'reserved'],
  ['198.18.0.1', 'reserved'],
  ['240.0.0.1', 'reserved'],
  ['255.255.255.255', 'reserved'],
  ['2001:db8::1', 'reserved'],
  ['2001:0:4136:e378::1', 'reserved'],
  ['100::1', 'reserved'],
  ['::1.2.3.4', 'reserved'],
  // Public.
  ['93.184.215.14', 'public'],
  ['8.8.8.8', 'public'],
  ['172.32.0.1', 'public'],
  ['100.128.0.1', 'public'],
  ['169.255.0.1', 'public'],
  ['::ffff:8.8.8.8', 'public'],
  ['64:ff9b::8.8.8.8', 'public'],
  ['2002:0808:0808::1', 'public'],
  ['2606:4700:4700::1111', 'public'],
  ['2a00:1450:4001:82b::200e', 'public'],
];

describe('classifyAddress', () => {
  it.each(cases)('%s is %s', (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });

  it('parses every IPv6 notation to the same bytes', () => {
    const expected = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1];
    expect(parseIPv6('::ffff:127.0.0.1')).toEqual(expected);
    expect(parseIPv6('::ffff:7f00:1')).toEqual(expected);
    expect(parseIPv6('[0:0:0:0:0:FFFF:7F00:0001]')).toEqual(expected);
    expect(parseIPv6('not-an-address')).toBeNull();
    expect(parseIPv6('127.0.0.1')).toBeNull();
  });
});

describe('addressRefusal', () => {
  it('refuses every non-public class unless private receivers are allowed', () => {
    for (const [address, kind] of cases) {
      const refusal = addressRefusal(address, false);
      if (kind === 'public') expect(refusal).toBeNull();
      else expect(refusal?.kind).toBe(kind);
    }
  });

  it('always refuses cloud metadata, even when private receivers are allowed', () => {
    for (const [address, kind] of cases) {
      const refusal = addressRefusal(address, true);
      if (kind === 'cloud metadata') expect(refusal?.reason).toMatch(/metadata/);
      else expect(refusal).toBeNull();
    }
  });
});

describe('hostRefusal (creation-time check, no DNS)', () => {
  it('refuses literal addresses and metadata names', () => {
    expect(hostRefusal('127.0.0.1', false)).toMatch(/loopback/);
    expect(hostRefusal('[::1]', false)).toMatch(/loopback/);
    expect(hostRefusal('[::ffff:7f00:1]', false)).toMatch(/loopback/);
    expect(hostRefusal('METADATA.google.internal.', true)).toMatch(/metadata/);
    expect(hostRefusal('169.254.169.254', true)).toMatch(/metadata/);
    expect(hostRefusal('127.0.0.1', true)).toBeNull();
    expect(hostRefusal('example.com', false)).toBeNull();
    expect(hostRefusal('8.8.8.8', false)).toBeNull();
  });
});

describe('resolveReceiver', () => {
  const fakeDns = (answers: Record<string, Array<{ address: string; family: number }>>) => async (name: string) => answers[name] ?? [];

  it('returns the resolved address when every address is public', async () => {
    const lookup = fakeDns({ 'hooks.example': [{ address: '93.184.215.14', family: 4 }, { address: '2606:4700::1', family: 6 }] });
    await expect(resolveReceiver('hooks.example', { allowPrivate: false, lookup })).resolves.toEqual({ address: '93.184.215.14', family: 4 });
  });

  it('refuses a name when any of its addresses is refused', async () => {
    const lookup = fakeDns({ 'mixed.example': [{ address: '93.184.215.14', family: 4 }, { address: '::ffff:10.0.0.1', family: 6 }] });
    const error = await resolveReceiver('mixed.example', { allowPrivate: false, lookup }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReceiverRefusedError);
    expect((error as Error).message).toMatch(/Refused to deliver: mixed\.example resolves to ::ffff:10\.0\.0\.1, a private address/);
  });

  it('refuses metadata names before resolving them', async () => {
    let asked = false;
    const lookup = async () => {
      asked = true;
      return [{ address: '93.184.215.14', family: 4 }];
    };
    await expect(resolveReceiver('metadata.google.internal', { allowPrivate: true, lookup })).rejects.toBeInstanceOf(ReceiverRefusedError);
    expect(asked).toBe(false);
  });

  it('checks IP literals without DNS', async () => {
    await expect(resolveReceiver('[::1]', { allowPrivate: false })).rejects.toThrow(/loopback/);
    await expect(resolveReceiver('[::1]', { allowPrivate: true })).resolves.toEqual({ address: '::1', family: 6 });
    await expect(resolveReceiver('8.8.8.8', { allowPrivate: false })).resolves.toEqual({ address: '8.8.8.8', family: 4 });
  });

  it('refuses localhost and its subdomains by their names, before any resolver is asked', async () => {
    for (const name of ['localhost', 'a.b.localhost']) {
      await expect(resolveReceiver(name, { allowPrivate: false, lookup: fakeDns({}) })).rejects.toThrow(new RegExp(`^Refused to deliver: ${name.replaceAll('.', '\\.')}, always this machine, a loopback address`));
    }
  });

  it('lets the resolver error through for names that do not resolve', async () => {
    await expect(resolveReceiver('nothing.example', { allowPrivate: false, lookup: fakeDns({}) })).rejects.toThrow(/no addresses/);
  });
});
