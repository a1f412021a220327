/** Sizes are edited in MiB in the forms and sent in bytes. */
export const MiB = 1024 * 1024;
/**
 * Bytes in MiB, exactly: a byte count divided by 2^20 has a finite decimal form, which reads back as
 * the same bytes. Rounded (to 0.01 MiB), a limit of 1,000,000,000 bytes came back as 999,995,474,
 * and one under 0.01 MiB showed as 0.
 */
export const toMiB = (bytes: number | null) => (bytes === null ? '' : String(bytes / MiB));
export const fromMiB = (text: string) => Math.round(Number(text) * MiB);
/** The smallest size a field in MiB accepts above nothing: one byte. */
export const ONE_BYTE_IN_MIB = toMiB(1);
