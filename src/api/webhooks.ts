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
