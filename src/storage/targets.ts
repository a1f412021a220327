/**
 * Whether two recorded storage targets (`Storage.target`) are the same place. Targets are compared
 * as places, not as the text of a setting: machines sharing one bucket may spell its endpoint
 * differently (`http://127.0.0.1:9000` and `http://localhost:9000/`, a host in capitals, no
 * `S3_ENDPOINT` on one and AWS's regional endpoint on the other). Compared as text, each refused
 * the other's chunked uploads with 409 and a sweep skipped aborting the parts of a session it
 * deleted, leaving them in the bucket. Targets recorded by earlier versions are read the same way.
 */
export function sameStorageTarget(recorded: string | null, current: string): boolean {
  return recorded !== null && (recorded === current || placeOf(recorded) === placeOf(current));
}

/** `s3:<endpoint or aws:<region>>/<bucket>` as a place: bucket, and host and port without scheme or case. */
function placeOf(target: string): string {
  if (!target.startsWith('s3:')) return target;
  const rest = target.slice('s3:'.length);
  const slash = rest.lastIndexOf('/');
  if (slash < 0) return target;
  const bucket = rest.slice(slash + 1);
  const endpoint = rest.slice(0, slash).replace(/\/+$/, '');
  return `s3:${endpointPlace(endpoint)}/${bucket}`;
}

function endpointPlace(endpoint: string): string {
  if (endpoint.startsWith('aws:')) return endpoint;
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return endpoint.toLowerCase();
  }
  const host = url.hostname.toLowerCase();
  // AWS's own endpoints name the region the SDK would otherwise pick from S3_REGION.
  const aws = /^s3(?:[.-]dualstack)?(?:[.-]([a-z0-9-]+))?\.amazonaws\.com$/.exec(host);
  if (aws) return `aws:${aws[1] ?? 'us-east-1'}`;
  const loopback = host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  const path = url.pathname.replace(/\/+$/, '');
  return `${loopback ? 'loopback' : host}:${port}${path}`;
}
