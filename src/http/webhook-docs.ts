import { z } from 'zod';
import { fileReadyEventSchema } from '../api/webhooks.ts';
import { DEFAULT_RETRY_DELAYS_MS } from '../webhooks/delivery-job.ts';

const seconds = (ms: number) => (ms < 60_000 ? `${ms / 1000} s` : ms < 3_600_000 ? `${ms / 60_000} min` : `${ms / 3_600_000} h`);

/**
 * The `webhooks` part of the OpenAPI document (3.1): what a receiver of `file.ready` gets (contract
 * §5), its signing headers and what its answer means, so an integrator need not read the code.
 * The event's schema is the one the outbox types its body with (src/api/webhooks.ts).
 */
export function webhookDocumentation(): { webhooks: Record<string, unknown>; schemas: Record<string, unknown> } {
  // The schema names itself (`FileReadyEvent`), so it comes as a definition the document's
  // components take as they are, references pointed there.
  const generated = z.toJSONSchema(fileReadyEventSchema, { target: 'draft-2020-12', io: 'output' }) as { $defs?: Record<string, unknown> };
  const schemas = JSON.parse(JSON.stringify(generated.$defs ?? {}).replaceAll('"#/$defs/', '"#/components/schemas/')) as Record<string, unknown>;
  const header = (name: string, description: string) => ({ in: 'header', name, required: true, description, schema: { type: 'string' } });
  return {
    schemas,
    webhooks: {
      'file.ready': {
        post: {
          operationId: 'fileReady',
          tags: ['webhooks'],
          summary: 'Sent to every enabled webhook of an account when one of its uploads is committed',
          description: [
            'Once per committed file: a single upload, a chunked upload, each file an archive extraction makes, a new archive, and each imported file.',
            'Signed as Standard Webhooks: `webhook-signature` is `v1,` and the base64 HMAC-SHA256, keyed with the base64-decoded part of the secret after `whsec_`, of `{webhook-id}.{webhook-timestamp}.{body}` over the exact bytes received. Refuse a timestamp more than a few minutes away from your clock.',
            `Each attempt has 10 s to be answered; redirects are not followed. A 2xx is delivered. 408, 429, 5xx and network errors are tried again after ${DEFAULT_RETRY_DELAYS_MS.map(seconds).join(', ')}; then the delivery fails. Any other status fails it at once. Deliveries survive a restart of the server and may arrive more than once: drop a \`webhook-id\` already seen.`,
          ].join('\n\n'),
          parameters: [
            header('webhook-id', 'The event ID (`evt_…`), the same on every attempt'),
            header('webhook-timestamp', 'Unix seconds when this attempt was signed'),
            header('webhook-signature', '`v1,<base64 HMAC-SHA256>`'),
            { ...header('user-agent', '`Hoard-Webhooks/1`'), required: false },
          ],
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/FileReadyEvent' } } } },
          responses: {
            '2XX': { description: 'Delivered: the event is not sent again' },
            default: { description: '408, 429 and 5xx are tried again with back-off; any other status fails the delivery' },
          },
        },
      },
    },
  };
}
