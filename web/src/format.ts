const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return '–';
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(value >= 100 ? 0 : 1).replace(/\.0$/, '')} ${units[unit]}`;
}

/** The listing gives sizes in MiB (spec, File record). */
export const mibToBytes = (mib: number) => Math.round(mib * 1024 * 1024);

export function formatSpeed(bytesPerSecond: number): string {
  return `${formatBytes(bytesPerSecond)}/s`;
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return '–';
  return dateTime.format(new Date(iso));
}

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '–';
  return dateOnly.format(new Date(iso));
}

/** `<input type="datetime-local">` value of an ISO instant, in the browser's zone. */
export function toLocalInput(iso: string | null | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

const localInput = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?$/;

/**
 * An ISO instant (with zone) from a datetime-local value, or null when empty. A value that is not
 * a date and time of a four-digit year throws, naming `field`: Chromium's field takes a year of up
 * to six digits (typing the time on without Tab gives `202711-01-01T11:00`), which `new Date`
 * cannot read, and read as "no date" it removed a file's expiry or made a token that never expires.
 */
export function fromLocalInput(value: string, field: string): string | null {
  if (!value) return null;
  const parts = localInput.exec(value);
  if (parts) {
    const [year, month, day, hours, minutes] = parts.slice(1, 6).map(Number) as [number, number, number, number, number];
    const date = new Date(year, month - 1, day, hours, minutes, Number(parts[6] ?? 0), Number((parts[7] ?? '0').padEnd(3, '0')));
    // A day the month lacks (Feb 30) rolls over in Date: refused instead.
    if (date.getFullYear() === year && date.getMonth() === month - 1 && date.getDate() === day) return date.toISOString();
  }
  throw new Error(`${field}: ${value} is not a date and time; pick one with a four-digit year`);
}

const monthFormat = new Intl.DateTimeFormat(undefined, { month: 'short', year: 'numeric', timeZone: 'UTC' });

/** A timeline bucket's label from its key: YYYY-MM, YYYY-Www, YYYY or all. */
export function bucketLabel(key: string): string {
  if (key === 'all') return 'All files';
  const month = /^(\d{4})-(\d{2})$/.exec(key);
  if (month) return monthFormat.format(new Date(Date.UTC(Number(month[1]), Number(month[2]) - 1, 1)));
  const week = /^(\d{4})-W(\d{2})$/.exec(key);
  if (week) return `Week ${Number(week[2])}, ${week[1]}`;
  return key;
}

export function pluralize(count: number, one: string, many = `${one}s`): string {
  return `${count.toLocaleString()} ${count === 1 ? one : many}`;
}

/**
 * A wait the server gave in seconds (`Retry-After`), as a person reads it: seconds up to a minute
 * and a half, then minutes up to an hour and a half, then hours; never shorter than the wait.
 */
export function formatWait(seconds: number): string {
  if (seconds < 90) return pluralize(Math.max(1, Math.ceil(seconds)), 'second');
  if (seconds < 90 * 60) return pluralize(Math.ceil(seconds / 60), 'minute');
  return pluralize(Math.ceil(seconds / 3600), 'hour');
}

/**
 * A webhook receiver's URL as the app shows it: a password in it (Basic credentials the receiver
 * asks for) hidden like any other secret on screen; the API keeps and returns the URL as given.
 */
export function withHiddenPassword(url: string): string {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(url);
  if (!scheme) return url;
  const rest = url.slice(scheme[0].length);
  const authority = rest.slice(0, rest.search(/[/?#]|$/));
  // The userinfo ends at the authority's last `@`, as a URL parser reads it; the password after its first `:`.
  const at = authority.lastIndexOf('@');
  const colon = authority.indexOf(':');
  if (at < 0 || colon < 0 || colon > at || colon === at - 1) return url;
  return `${scheme[0]}${authority.slice(0, colon + 1)}••••${rest.slice(at)}`;
}

/** A readable message for an error response, with what to do for the common statuses. */
export function describeFailure(status: number, body: unknown, retryAfter: number | null): string {
  const message = body && typeof body === 'object' && 'error' in body && typeof (body as { error: unknown }).error === 'string' ? (body as { error: string }).error : '';
  if (status === 413) return `Too large: ${message || 'the file is over the size limit or your storage quota'}`;
  // Where the server's own words already say when ("…; try again in 15 minutes", "…frees the part
  // within 30 seconds"), the wait is not said a second time.
  const saysWhen = /\b(?:try again in|within) \d/.test(message);
  if (status === 429) {
    if (saysWhen) return message;
    return `${message || 'Too many requests'}: wait ${formatWait(retryAfter ?? 60)} and try again`;
  }
  // A conflict that passes (the server says when): a resend while a copy of the event is on its way,
  // a part still arriving in an earlier request.
  if (status === 409 && retryAfter !== null) return saysWhen ? message : `${message || 'This conflicts with work still under way'} (try again in ${formatWait(retryAfter)})`;
  if (status === 403 && !message) return 'You do not have permission to do this';
  if (status >= 500) return message || 'The server could not complete the operation';
  return message || `Request failed (HTTP ${status})`;
}
