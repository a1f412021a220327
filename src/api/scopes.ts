import { z } from 'zod';

/** Named-token scopes (spec, Authentication 3). */
export const scopes = ['files:read', 'files:upload', 'urls:read', 'urls:write'] as const;
export type Scope = (typeof scopes)[number];

export const scopeSchema = z.enum(scopes).meta({ id: 'Scope', description: 'A named-token scope (spec, Authentication 3)' });
