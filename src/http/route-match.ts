import { routePolicies, type RoutePolicy } from '../auth/route-policy.ts';

/**
 * The route policies a concrete path reaches, for answers given without Fastify's routing: a
 * request refused before it was routed (headers too large, a body that stopped arriving), and the
 * methods a path has (the 405's Allow header). The table has a row for every route (app.ts checks
 * it at start-up), so it is the route table here too.
 */
const compiled = routePolicies.map((policy) => ({ policy, segments: policy.path.split('/').slice(1) }));

/** Canonical order of the Allow header. */
const methodOrder = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * How well `segments` matches `parts`, segment by segment (0 static, 1 parameter, 2 wildcard), or
 * null. Lower is better, compared left to right, as the router prefers a static segment.
 */
function rank(segments: string[], parts: string[]): number[] | null {
  const ranks: number[] = [];
  for (const [i, segment] of segments.entries()) {
    if (segment === '*') return [...ranks, 2];
    const part = parts[i];
    if (part === undefined) return null;
    if (segment.startsWith(':')) {
      if (part === '') return null;
      ranks.push(1);
    } else if (segment === part) ranks.push(0);
    else return null;
  }
  return parts.length === segments.length ? ranks : null;
}

function before(a: number[], b: number[]): boolean {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! < b[i]!;
  return false;
}

/** Every policy whose pattern matches the path (query string ignored), best match first. */
function matching(url: string): RoutePolicy[] {
  const path = url.split('?')[0]!;
  const parts = path.split('/').slice(1);
  // An /api path is never a share page (`/:urlId/:name` would otherwise match any two segments).
  const api = path.startsWith('/api/');
  const found: Array<{ policy: RoutePolicy; ranks: number[] }> = [];
  for (const { policy, segments } of compiled) {
    if (api && !policy.path.startsWith('/api/')) continue;
    const ranks = rank(segments, parts);
    if (ranks) found.push({ policy, ranks });
  }
  return found.sort((a, b) => (before(a.ranks, b.ranks) ? -1 : before(b.ranks, a.ranks) ? 1 : 0)).map((f) => f.policy);
}

/** The policy a method and concrete path reach; HEAD is the GET route's. */
export function policyForUrl(method: string, url: string): RoutePolicy | undefined {
  const wanted = method === 'HEAD' ? 'GET' : method;
  return matching(url).find((policy) => policy.method === wanted);
}

/** The methods the route table has for a concrete path, in canonical order; empty for an unknown path. */
export function methodsForUrl(url: string): string[] {
  const methods = new Set<string>(matching(url).map((policy) => policy.method));
  return methodOrder.filter((method) => methods.has(method));
}

/** The route's error shape; for a path with no route for this method, the shape of its best match. */
export function errorShapeForUrl(method: string, url: string): RoutePolicy['errors'] | undefined {
  return (policyForUrl(method, url) ?? matching(url)[0])?.errors;
}
