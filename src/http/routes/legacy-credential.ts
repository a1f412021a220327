import { principalOf, type RouteModule } from '../route-module.ts';
import { bytes, ok } from '../responses.ts';
import { shareXShortenerSchema, shareXUploaderSchema, uploadTokenResponse } from '../../api/tokens.ts';
import { getUploadToken, regenerateUploadToken } from '../../tokens/legacy-token.ts';
import { bashScript, flameshotScript, sharexConfig, sharexShortenerConfig } from '../../tokens/uploader-configs.ts';

export const legacyCredentialRoutes: RouteModule = async (app, { ctx }) => {
  const tags = ['tokens'];
  const { baseUrl } = ctx.config;
  const host = new URL(baseUrl).host;
  // Credentials are answered here (a secret, once; the upload credential and the configurations
  // that embed it): no cache along the way, nor the browser's, may keep a copy.
  app.addHook('onSend', async (_request, reply) => {
    reply.header('Cache-Control', 'no-store');
  });

  app.get(
    '/api/profile/upload-token',
    { schema: { tags, operationId: 'getUploadCredential', summary: 'The account upload credential used by uploader configurations', response: { 200: uploadTokenResponse } } },
    async (request) => ok({ uploadToken: await getUploadToken(ctx.db, ctx.secretBox, request.log, principalOf(request).user.id) }),
  );

  app.post(
    '/api/profile/upload-token',
    { schema: { tags, operationId: 'regenerateUploadCredential', summary: 'Regenerate the upload credential; earlier configurations stop working', response: { 200: uploadTokenResponse } } },
    async (request) => ok({ uploadToken: await regenerateUploadToken(ctx.db, ctx.secretBox, principalOf(request).user.id) }),
  );

  // Files to download, sent as written (indented for people to read): typed like bytes(), whose
  // bodies are not serialised, while the schemas still document and (in tests) check their JSON.
  const fileName = host.replace(/[^a-zA-Z0-9.-]/g, '_');
  for (const [path, make, schema, file, operationId, summary] of [
    ['/api/profile/sharex', sharexConfig, shareXUploaderSchema, `hoard-${fileName}.sxcu`, 'getShareXConfig', 'ShareX custom uploader (.sxcu)'],
    ['/api/profile/sharex-shortener', sharexShortenerConfig, shareXShortenerSchema, `hoard-${fileName}-links.sxcu`, 'getShareXShortenerConfig', 'ShareX URL shortener (.sxcu)'],
  ] as const) {
    const sxcu: ReturnType<typeof bytes> = { description: 'The .sxcu file, a JSON document', content: { 'application/json': { schema } } };
    app.get(path, { schema: { tags, operationId, summary, response: { 200: sxcu } } }, async (request, reply) => {
      const token = await getUploadToken(ctx.db, ctx.secretBox, request.log, principalOf(request).user.id);
      return reply
        .header('Content-Disposition', `attachment; filename="${file}"`)
        .type('application/json; charset=utf-8')
        .send(JSON.stringify(make(baseUrl, token, host), null, 2));
    });
  }

  for (const [path, make, file, operationId] of [
    ['/api/profile/flameshot', flameshotScript, 'hoard-flameshot.sh', 'getFlameshotScript'],
    ['/api/profile/bash', bashScript, 'hoard-upload.sh', 'getBashScript'],
  ] as const) {
    app.get(path, { schema: { tags, operationId, summary: `Shell script (${file}) that uploads with the account credential`, response: { 200: bytes(`The script, ${file}`, 'text/x-shellscript') } } }, async (request, reply) => {
      const token = await getUploadToken(ctx.db, ctx.secretBox, request.log, principalOf(request).user.id);
      return reply.header('Content-Disposition', `attachment; filename="${file}"`).type('text/x-shellscript; charset=utf-8').send(make(baseUrl, token));
    });
  }
};
