import { z } from 'zod';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { principalOf, type RouteModule } from '../route-module.ts';
import { listFiles, listTypes } from '../../listing/list-files.ts';
import { fileTimeline } from '../../listing/timeline.ts';
import { galleryDirections, parseListQuery, parseTimelineQuery, visibilityFilters } from '../../listing/parameters.ts';
import { groupings } from '../../listing/calendar.ts';
import { ok } from '../responses.ts';
import { fileListResponse, fileTypesResponse, timelineResponse, type FileListResponse, type FileTypesResponse } from '../../api/files.ts';

// Each parameter is one text value; the rules are checked by src/listing/parameters.ts, which names
// the parameter in its 400 message. Unknown parameters are ignored (clients add cache-busters).
// The document also gives a parameter's form where the rules have one (a whole number, one of a few
// words), for clients generated from it; the values are still checked by those rules alone.
const once = (description: string, form: { pattern?: string; enum?: readonly string[] } = {}) =>
  z.string({ error: 'give this parameter once, as a single value' }).meta(form).optional().describe(description);
const wholeNumber = { pattern: '^[1-9][0-9]*$' };

const filterParameters = {
  ids: once('1 to 100 distinct comma-separated file IDs; unowned or missing IDs are omitted'),
  search: once('case-insensitive match on file name or OCR text'),
  sortBy: once('newest (default), oldest, largest, smallest, name, most-viewed, least-viewed, most-downloaded, least-downloaded'),
  types: once('comma-separated exact MIME types'),
  dateFrom: once('inclusive uploadedAt lower bound: ISO 8601 timestamp with a zone (a date alone: its server-local start)'),
  dateTo: once('inclusive upper bound: a timestamp keeps its instant; a date includes its whole server-local day'),
  visibility: once('comma-separated public (public, no password), private, hasPassword; ORed', { pattern: `^ *(${visibilityFilters.join('|')}) *(, *(${visibilityFilters.join('|')}) *)*$` }),
  folder: once('an owned folder ID (direct members only) or "unfiled"'),
  tag: once('an owned tag ID or "untagged"'),
};

const listQuery = z.object({
  ...filterParameters,
  page: once('at least 1; default 1', wholeNumber),
  limit: once('at least 1; default 24; capped at 100', wholeNumber),
  galleryAnchor: once('an image file ID within the current filter; requires galleryDirection'),
  galleryDirection: once('next or previous; requires galleryAnchor', { enum: galleryDirections }),
  snapshot: once('inclusive upload-time ceiling returned by GET /api/files/timeline'),
});

const timelineQuery = z.object({
  ...filterParameters,
  groupBy: once('none (default: months, echoed as none), month, week (ISO, from Monday) or year', { enum: groupings }),
  timezone: once('IANA time zone for calendar boundaries; default UTC'),
});

/**
 * Sends a listing response through the listing cache: `parameters` (the parsed, canonical request)
 * and the account's URL ID are everything the body depends on besides the account's listing version.
 * The cached body is JSON text, sent as it is (Fastify does not serialise a string again): it is
 * encoded by the route's schema once, when it is made, which keeps only the fields the schema names,
 * as the serializer does for every other answer (about 0.03 ms for a page of 100).
 */
async function sendListing<Schema extends z.ZodType>(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, route: string, parameters: unknown, schema: Schema, produce: () => Promise<z.output<Schema>>) {
  const { user, listingVersion } = principalOf(request);
  const key = `${route}\u0000${user.urlId}\u0000${JSON.stringify(parameters)}`;
  const body = await ctx.listingCache.body(user.id, listingVersion, key, async () => JSON.stringify(z.encode(schema, await produce())));
  return reply.header('Cache-Control', 'private, no-store').type('application/json; charset=utf-8').send(body);
}

/** The file listing of the named-token API (spec, GET /api/files, /types, /timeline). */
export const fileListingRoutes: RouteModule = async (app, { ctx }) => {
  const tags = ['files'];
  app.get(
    '/api/files',
    {
      schema: {
        tags,
        operationId: 'listFiles',
        summary: "List and search the account's files (sizes in MiB), or the images next to a gallery anchor",
        querystring: listQuery,
        response: { 200: fileListResponse },
      },
    },
    (request, reply) => {
      const { user } = principalOf(request);
      const query = parseListQuery(request.query);
      return sendListing(ctx, request, reply, 'files', query, fileListResponse, async (): Promise<FileListResponse> => {
        const listing = await listFiles(ctx.db, ctx.reader, ctx.dialect, user.id, { urlId: user.urlId, baseUrl: ctx.config.baseUrl }, query);
        return { ...ok(listing.data), pagination: listing.pagination };
      });
    },
  );

  app.get('/api/files/types', { schema: { tags, operationId: 'listFileTypes', summary: "The account's distinct MIME types, sorted", response: { 200: fileTypesResponse } } }, (request, reply) =>
    sendListing(ctx, request, reply, 'types', null, fileTypesResponse, async (): Promise<FileTypesResponse> => ok({ types: await listTypes(ctx.db, principalOf(request).user.id) })),
  );

  app.get(
    '/api/files/timeline',
    {
      schema: {
        tags,
        operationId: 'getTimeline',
        summary: 'Counts of the selected files per calendar bucket, with a snapshot for window reads',
        querystring: timelineQuery,
        response: { 200: timelineResponse },
      },
    },
    async (request, reply) => {
      const timeline = await fileTimeline(ctx.db, ctx.reader, ctx.dialect, principalOf(request).user.id, parseTimelineQuery(request.query));
      reply.header('Cache-Control', 'private, no-store');
      return ok(timeline);
    },
  );
};
