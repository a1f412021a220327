import type { FastifyRequest } from 'fastify';

/**
 * What a page loads as code or style (Fetch Metadata's `Sec-Fetch-Dest`). The web app's CSP allows
 * scripts and styles of its own origin, which is the files' origin too: an uploaded `.js` loaded by a
 * `<script>` of this site ran, whatever its Content-Disposition, so one flaw that let a member put
 * a tag into a page would have run their file as the administrator. An archive's entry is such
 * bytes as much as a file is.
 */
const CODE_DESTINATIONS = new Set(['script', 'style', 'worker', 'sharedworker', 'serviceworker', 'audioworklet', 'paintworklet', 'xslt']);

/** Bytes asked for by one of this site's own pages as code or style; other sites may use files as they like. */
export const loadedAsOwnCode = (request: FastifyRequest) => request.headers['sec-fetch-site'] === 'same-origin' && CODE_DESTINATIONS.has(String(request.headers['sec-fetch-dest']));

export const NOT_AS_CODE = "A file is not served to this site's own pages as a script, a style or a worker";
