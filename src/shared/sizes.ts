const UNITS = ['KiB', 'MiB', 'GiB', 'TiB'] as const;

/**
 * A number of bytes as a message says it to a person: in KiB, MiB, GiB or TiB where that is exact to
 * a tenth ("100 MiB", "1.5 GiB"), less than 1 KiB in bytes, and anything else to a tenth with the
 * exact bytes after it ("1.4 KiB (1500 bytes)"). The tenth is rounded down, so that neither a limit
 * nor the room left is said to be more than it is.
 */
export function sizeInWords(bytes: number): string {
  if (bytes < 1024) return bytes === 1 ? '1 byte' : `${bytes} bytes`;
  let unit = 0;
  while (unit < UNITS.length - 1 && bytes >= 1024 ** (unit + 2)) unit++;
  const size = 1024 ** (unit + 1);
  const tenths = Math.floor((bytes * 10) / size) / 10;
  return (bytes * 10) % size === 0 ? `${tenths} ${UNITS[unit]}` : `${tenths} ${UNITS[unit]} (${bytes} bytes)`;
}
