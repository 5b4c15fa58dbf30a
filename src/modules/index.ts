import type { FastifyInstance } from 'fastify';
import type { Config, DeploymentProfile } from '../config.js';
import type { Services } from '../services.js';
import { adminUsersRoutes } from './admin-users/routes.js';
import { apiKeysRoutes } from './api-keys/routes.js';
import { authRoutes } from './auth/routes.js';
import { informationalRoutes } from './meta/routes.js';
import { usersRoutes } from './users/routes.js';

export interface ModuleContext {
  services: Services;
  config: Config;
}

/**
 * Every route module with the deployment profiles that serve it. A `core` deployment registers only core modules,
 * so module routes answer 404 there; a new module adds one entry here and nothing else changes.
 */
export interface ModuleEntry {
  name: string;
  profiles: readonly DeploymentProfile[];
  register(app: FastifyInstance, ctx: ModuleContext): PromiseLike<unknown>;
}

const EVERY_PROFILE = ['core', 'full'] as const;

export const MODULES: ModuleEntry[] = [
  {
    name: 'auth',
    profiles: EVERY_PROFILE,
    register: (app, { services }) => app.register(authRoutes, { prefix: '/api/v1/auth', auth: services.auth, users: services.users }),
  },
  {
    name: 'users',
    profiles: EVERY_PROFILE,
    register: (app, { services, config }) =>
      app.register(usersRoutes, { prefix: '/api/v1/users', users: services.users, localProvider: config.authProvider === 'local' }),
  },
  {
    name: 'admin-users',
    profiles: EVERY_PROFILE,
    register: (app, { services }) => app.register(adminUsersRoutes, { prefix: '/api/v1/admin/users', users: services.users }),
  },
  {
    name: 'api-keys',
    profiles: EVERY_PROFILE,
    register: (app, { services }) => app.register(apiKeysRoutes, { prefix: '/api/v1/api-keys', apiKeys: services.apiKeys }),
  },
  {
    name: 'informational',
    profiles: EVERY_PROFILE,
    register: (app) => app.register(informationalRoutes),
  },
];

export function modulesFor(profile: DeploymentProfile): ModuleEntry[] {
  return MODULES.filter((m) => m.profiles.includes(profile));
}
