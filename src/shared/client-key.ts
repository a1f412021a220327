import { isIP } from 'node:net';

/**
 * The client a throttle counts for an address: an IPv4 address itself (an IPv4 address written
 * inside IPv6, `::ffff:192.0.2.1`, is that address), and for IPv6 its /64 network. One home or
 * server is given a whole /64 and may send from any address in it, so counting each address would
 * give it some 18 billion billion sets of guesses (docs/decisions.md, "Throttles count networks").
 */
export function clientKey(ip: string): string {
  // Some proxies add the client's port to X-Forwarded-For (`192.0.2.1:5555`, `[2001:db8::1]:443`).
  const bare = (/^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(ip)?.[1] ?? /^\[([^\]]+)\](?::\d+)?$/.exec(ip)?.[1] ?? ip).replace(/%.*$/, '').toLowerCase();
  const family = isIP(bare);
  if (family === 4) return bare;
  // Not an address at all: counted as it is.
  if (family !== 6) return ip;
  // The groups as written on either side of `::`, which stands for as many zero groups as are missing;
  // an IPv4 address at the end stands for the last two.
  const [head = '', tail = ''] = bare.split('::');
  const groupsOf = (text: string) => (text === '' ? [] : text.split(':'));
  const front = groupsOf(head);
  const back = groupsOf(tail);
  const ending = back.length > 0 ? back : front;
  const dotted = ending.at(-1)?.includes('.') ? ending.pop()! : null;
  const written = front.length + back.length + (dotted ? 2 : 0);
  const groups = [...front, ...Array<string>(8 - written).fill('0'), ...back].map((group) => Number.parseInt(group, 16));
  // `::ffff:192.0.2.1` is that IPv4 address.
  if (dotted && groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) return dotted;
  return `${groups.slice(0, 4).map((group) => group.toString(16)).join(':')}::/64`;
}
