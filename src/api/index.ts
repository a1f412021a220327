/**
 * The shapes of the HTTP API, one definition each (docs/architecture.md, "One definition of the
 * API"): the server serialises its answers with them, `/api/openapi.json` is generated from them and
 * the web app imports their types (alias `@api`). Nothing here may import Node or application code.
 */
export * from './errors.ts';
export * from './envelope.ts';
export * from './permissions.ts';
export * from './scopes.ts';
export * from './tags.ts';
export * from './tokens.ts';
export * from './webhooks.ts';
export * from './links.ts';
export * from './meta.ts';
export * from './files.ts';
export * from './accounts.ts';
export * from './admin.ts';
export * from './sign-in-security.ts';
export * from './upload-options.ts';
export * from './organisation.ts';
export * from './uploads.ts';
export * from './archives.ts';
