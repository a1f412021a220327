/** Sizes are edited in MiB in the forms and sent in bytes. */
export const MiB = 1024 * 1024;
export const toMiB = (bytes: number | null) => (bytes === null ? '' : String(Math.round((bytes / MiB) * 100) / 100));
export const fromMiB = (text: string) => Math.round(Number(text) * MiB);
