import { z } from 'zod';
import { success, timestamp } from './envelope.ts';

/** A tag (contract §3, "Upload profiles, folders, tags"). */
export const tagSchema = z.object({ id: z.string(), name: z.string(), createdAt: timestamp }).meta({ id: 'Tag' });
export type Tag = z.infer<typeof tagSchema>;

export const tagListResponse = success(z.object({ tags: z.array(tagSchema) }));
export const tagResponse = success(z.object({ tag: tagSchema }));
