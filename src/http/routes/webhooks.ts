import { z } from 'zod';
import { principalOf, type RouteModule } from '../route-module.ts';
import { idParams, pathText } from '../schemas.ts';
import { nameSchema } from '../../shared/display-name.ts';
import { noBody, ok } from '../responses.ts';
import { createdWebhookResponse, deliveryListResponse, deliveryResponse, webhookListResponse, webhookResponse } from '../../api/webhooks.ts';
import { createWebhook, deleteWebhook, listDeliveries, listWebhooks, resendDelivery, rotateWebhookSecret, sendTestEvent, updateWebhook, webhookLimits } from '../../webhooks/webhooks.ts';

const isHttpUrl = (value: string) => {
  try {
    const url = new URL(value.trim());
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
};

const name = nameSchema(webhookLimits.nameLength);
const url = z
  .string()
  .max(webhookLimits.urlLength, { message: `must be at most ${webhookLimits.urlLength} characters` })
  .refine(isHttpUrl, { message: 'must be an absolute http:// or https:// URL' });

const createBody = z.strictObject({ name, url });
const patchBody = z.strictObject({ name: name.optional(), url: url.optional(), enabled: z.boolean().optional() });

export const webhookRoutes: RouteModule = async (app, { ctx }) => {
  const tags = ['webhooks'];
  const options = { dialect: ctx.dialect, secretBox: ctx.secretBox, allowPrivate: ctx.config.webhookAllowPrivate };
  // Credentials are answered here (a webhook's signing secret, once): no cache along the way, nor the browser's, may keep a copy.
  app.addHook('onSend', async (_request, reply) => {
    reply.header('Cache-Control', 'no-store');
  });

  app.post(
    '/api/webhooks',
    { schema: { tags, operationId: 'createWebhook', summary: 'Create a file-ready webhook; the signing secret is shown only in this response', body: createBody, response: { 201: createdWebhookResponse } } },
    async (request, reply) => {
      const created = await createWebhook(ctx.db, options, principalOf(request).user.id, request.body);
      return reply.code(201).send(ok(created));
    },
  );

  app.get('/api/webhooks', { schema: { tags, operationId: 'listWebhooks', summary: "The account's webhooks (never their secrets)", response: { 200: webhookListResponse } } }, async (request) =>
    ok({ webhooks: await listWebhooks(ctx.db, principalOf(request).user.id) }),
  );

  app.patch(
    '/api/webhooks/:id',
    { schema: { tags, operationId: 'updateWebhook', summary: 'Rename, re-target, enable or disable a webhook', params: idParams, body: patchBody, response: { 200: webhookResponse } } },
    async (request) => ok({ webhook: await updateWebhook(ctx.db, options, principalOf(request).user.id, request.params.id, request.body ?? {}) }),
  );

  app.delete(
    '/api/webhooks/:id',
    { schema: { tags, operationId: 'deleteWebhook', summary: 'Delete a webhook, its delivery log and its unsent deliveries', params: idParams, response: { 204: noBody('Deleted') } } },
    async (request, reply) => {
      await deleteWebhook(ctx.db, principalOf(request).user.id, request.params.id);
      return reply.code(204).send();
    },
  );

  app.post(
    '/api/webhooks/:id/rotate-secret',
    {
      schema: {
        tags,
        operationId: 'rotateWebhookSecret',
        summary: 'A new signing secret, shown only in this response; the old one keeps signing beside it for 24 hours',
        params: idParams,
        response: { 200: createdWebhookResponse },
      },
    },
    async (request) => ok(await rotateWebhookSecret(ctx.db, options, principalOf(request).user.id, request.params.id)),
  );

  app.post(
    '/api/webhooks/:id/test',
    { schema: { tags, operationId: 'testWebhook', summary: 'Send a test file.ready event ("test": true) to this webhook', params: idParams, response: { 202: deliveryResponse } } },
    async (request, reply) => {
      const delivery = await sendTestEvent(ctx.db, principalOf(request).user.id, request.params.id, ctx.config.baseUrl);
      ctx.jobs.wake();
      return reply.code(202).send(ok({ delivery }));
    },
  );

  app.post(
    '/api/webhooks/:id/deliveries/:deliveryId/resend',
    {
      schema: {
        tags,
        operationId: 'resendWebhookDelivery',
        summary: 'Send a delivered or failed event again, with the same body and webhook-id, as a new delivery',
        params: z.strictObject({ id: pathText, deliveryId: pathText }),
        response: { 202: deliveryResponse },
      },
    },
    async (request, reply) => {
      const delivery = await resendDelivery(ctx.db, options, principalOf(request).user.id, request.params.id, request.params.deliveryId);
      ctx.jobs.wake();
      return reply.code(202).send(ok({ delivery }));
    },
  );

  app.get(
    '/api/webhooks/:id/deliveries',
    { schema: { tags, operationId: 'listWebhookDeliveries', summary: 'The latest 100 deliveries of a webhook, newest first', params: idParams, response: { 200: deliveryListResponse } } },
    async (request) => ok({ deliveries: await listDeliveries(ctx.db, principalOf(request).user.id, request.params.id) }),
  );
};
