import { describe, expect, it } from 'vitest';
import { clientKey } from '../../src/shared/client-key.ts';

describe('the client a throttle counts', () => {
  it('is an IPv4 address itself, also written inside IPv6', () => {
    expect(clientKey('192.0.2.1')).toBe('192.0.2.1');
    expect(clientKey('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(clientKey('::FFFF:198.51.100.7')).toBe('198.51.100.7');
    expect(clientKey('0:0:0:0:0:ffff:192.0.2.9')).toBe('192.0.2.9');
  });
  it("is an IPv6 address's /64, however the address is written", () => {
    for (const address of ['2001:db8:1:1::1', '2001:db8:1:1::2', '2001:0db8:0001:0001:ffff:ffff:ffff:ffff', '2001:DB8:1:1:0:0:0:3', '2001:db8:1:1::1%eth0']) {
      expect(clientKey(address), address).toBe('2001:db8:1:1::/64');
    }
    expect(clientKey('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64');
    expect(clientKey('::1')).toBe('0:0:0:0::/64');
    expect(clientKey('fe80::1')).toBe('fe80:0:0:0::/64');
    expect(clientKey('2001:db8::')).toBe('2001:db8:0:0::/64');
    expect(clientKey('64:ff9b::192.0.2.1')).toBe('64:ff9b:0:0::/64');
  });
  it('leaves out a port a proxy added, and counts what is no address as it is', () => {
    expect(clientKey('192.0.2.1:5555')).toBe('192.0.2.1');
    expect(clientKey('198.51.100.7:5555')).toBe('198.51.100.7');
    expect(clientKey('[2001:db8:aaaa:1::1]:443')).toBe('2001:db8:aaaa:1::/64');
    expect(clientKey('[2001:db8:aaaa:1::1]')).toBe('2001:db8:aaaa:1::/64');
    expect(clientKey('unknown')).toBe('unknown');
    expect(clientKey('not:an:address')).toBe('not:an:address');
  });
});
