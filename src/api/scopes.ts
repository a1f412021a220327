import { z } from 'zod';
import { scopes } from './vocabulary.ts';

export { scopes, type Scope } from './vocabulary.ts';

export const scopeSchema = z.enum(scopes).meta({ id: 'Scope', description: 'A named-token scope (spec, Authentication 3)' });
