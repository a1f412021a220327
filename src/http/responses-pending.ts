// Transitional: routes whose response schemas are still being written. Each is removed from this
// list as its module declares them; the file goes when the list is empty.
export const pendingResponseSchemas = new Set<string>([
  'POST /api/files',
  'POST /api/files/chunks',
  'GET /api/files/chunks',
  'PUT /api/files/chunks',
  'GET /api/files/chunks/:uploadId/part/:partNumber',
  'PUT /api/files/chunks/:uploadId/part/:partNumber',
  'POST /api/files/chunks/:uploadId/complete',
  'GET /api/upload-profiles',
  'POST /api/upload-profiles',
  'PATCH /api/upload-profiles/:id',
  'DELETE /api/upload-profiles/:id',
  'GET /api/folders',
  'POST /api/folders',
  'PATCH /api/folders/:id',
  'DELETE /api/folders/:id',
  'GET /api/account',
  'PATCH /api/account',
]);
