import { z } from 'zod';
import { allPermissions, type Permission } from './vocabulary.ts';

export { allPermissions, isPermission, permissionGroups, type Permission } from './vocabulary.ts';

export const permissionSchema = z.enum(allPermissions as [Permission, ...Permission[]]).meta({ id: 'Permission', description: 'A permission of the vocabulary (contract §2)' });
