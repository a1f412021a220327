import { ApiError, errorMessage } from '../../api.ts';

/**
 * What went wrong with an archive request, in words. A 503 means the server's archive capacity is
 * full for the moment (contract §9): nothing is wrong with the request, so say when to try again.
 */
export function archiveFailure(error: unknown): string {
  if (error instanceof ApiError && error.status === 503) return `The server is busy with other archives. Try again in ${error.retryAfter ?? 5} seconds.`;
  return errorMessage(error);
}

export const isBusy = (error: unknown) => error instanceof ApiError && error.status === 503;

export const entryPath = (fileId: string, path: string) => `/api/archives/${encodeURIComponent(fileId)}/entry?path=${encodeURIComponent(path)}`;
