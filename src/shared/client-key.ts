import { isIP } from 'node:net';

/**
 * The client a throttle counts for an address: an IPv4 address itself (an IPv4 address written
 * inside IPv6, `::ffff:192.0.2.1`, is that address), and for IPv6 its /64 network. One home or
 * server is given a whole /64 and may send from any address in it, so counting each address would
 * give it some 18 billion billion sets of guesses (docs/decisions.md, "Throttles count networks").
 */
export function clientKey(ip: string): string {
  // Some proxies add the client's port to X-Forwarded-For (`192.0.2.1:5555`, `[2001:db8::1]:443`).
  const bare = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(ip)?.[1] ?? /^\[([^\]]+)\](?::\d+)?$/.exec(ip)?.[1] ?? ip;
  const family = isIP(bare.replace(/%.*$/, ''));
  if (family === 4) return bare;
  // Not an address at all: counted as it is.
  if (family !== 6) return ip;
  const address = bare.replace(/%.*$/, '').toLowerCase();
  const mapped = /^(?:0{0,4}:){0,5}(?:0{0,4}:)?ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(address.replace(/^::/, '0:'));
  if (mapped) return mapped[1]!;
  const [head = '', tail] = address.split('::');
  const groupsOf = (part: string) => (part === '' ? [] : part.split(':').flatMap((group) => (group.includes('.') ? ['0', '0'] : [group])));
  const front = groupsOf(head);
  const back = tail === undefined ? [] : groupsOf(tail);
  const groups = [...front, ...Array<string>(Math.max(0, 8 - front.length - back.length)).fill('0'), ...back];
  return `${groups
    .slice(0, 4)
    .map((group) => (Number.parseInt(group, 16) || 0).toString(16))
    .join(':')}::/64`;
}
