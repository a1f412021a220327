import { z } from 'zod';
import { success, timestamp } from './envelope.ts';

/** A file-ready webhook (contract §3, "Webhooks"); never its signing secret. */
export const webhookSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    url: z.string().describe('The receiver: an http:// or https:// URL'),
    enabled: z.boolean(),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'Webhook' });
export type Webhook = z.infer<typeof webhookSchema>;

/** One event sent (or being sent) to a webhook (contract §5: retries with back-off). */
export const deliverySchema = z
  .object({
    id: z.string(),
    eventId: z.string().describe('The event’s ID, also sent as the `webhook-id` header'),
    status: z.enum(['pending', 'delivered', 'failed']).describe('pending: not sent yet or to be retried; delivered: a 2xx answer; failed: a final failure'),
    attempts: z.number().int().describe('Attempts made so far'),
    lastStatus: z.number().int().nullable().describe('HTTP status of the last attempt; null when no answer came'),
    lastError: z.string().nullable().describe('Why the last attempt failed'),
    createdAt: timestamp,
    deliveredAt: timestamp.nullable(),
  })
  .meta({ id: 'WebhookDelivery' });
export type Delivery = z.infer<typeof deliverySchema>;

/**
 * The body of a `file.ready` delivery (contract §5), as the receiver gets it; the document lists it
 * under `webhooks`, with the headers that sign it.
 */
export const fileReadyEventSchema = z
  .object({
    version: z.literal(1).describe('The payload version, independent of the API description version'),
    id: z.string().describe('The event ID, also the `webhook-id` header; the same on every attempt and resend of this event, so a receiver can drop duplicates'),
    type: z.literal('file.ready'),
    occurredAt: timestamp.describe('When the upload was committed'),
    test: z.literal(true).optional().describe('Only on a test event sent from the webhook settings; its file does not exist'),
    data: z.object({
      id: z.string().describe('The file ID'),
      name: z.string(),
      mimeType: z.string(),
      size: z.number().int().describe('Bytes (the listing gives MiB)'),
      visibility: z.enum(['PUBLIC', 'PRIVATE']),
      hasPassword: z.boolean(),
      folderId: z.string().nullable(),
      url: z.string().describe('The share page'),
      rawUrl: z.string().describe('The raw bytes'),
    }),
  })
  .meta({ id: 'FileReadyEvent' });
export type FileReadyEvent = z.infer<typeof fileReadyEventSchema>;

export const createdWebhookResponse = success(
  z.object({
    webhook: webhookSchema,
    secret: z.string().describe('The signing secret (`whsec_…`, Standard Webhooks); shown only in this answer'),
  }),
);
export const webhookListResponse = success(z.object({ webhooks: z.array(webhookSchema) }));
export const webhookResponse = success(z.object({ webhook: webhookSchema }));
export const deliveryResponse = success(z.object({ delivery: deliverySchema }));
export const deliveryListResponse = success(z.object({ deliveries: z.array(deliverySchema).describe('The latest 100, newest first') }));
