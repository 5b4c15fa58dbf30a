import type { Config } from './config.js';
import type { Database } from './db/client.js';
import type { AuditLog } from './platform/audit.js';
import type { Bus } from './platform/bus.js';
import type { Cache } from './platform/cache.js';
import type { Clock } from './platform/clock.js';
import type { TokenService } from './platform/tokens.js';
import type { Redis } from './platform/redis.js';
import { createApiKeysService } from './modules/api-keys/service.js';
import { createAuthService } from './modules/auth/service.js';
import { createUsersService } from './modules/users/service.js';

/** What the platform gives every service: storage, time, cross-process bus, cache and the audit writer. */
export interface PlatformDeps {
  config: Config;
  database: Database;
  clock: Clock;
  bus: Bus;
  cache: Cache;
  audit: AuditLog;
  tokens: TokenService;
  redis: Redis | undefined;
}

/** The composition root of the domain: each service gets exactly the collaborators it needs. */
export function createServices(deps: PlatformDeps) {
  const { config, clock, bus, audit } = deps;
  const db = deps.database.db;
  const users = createUsersService({
    db,
    audit,
    clock,
    bus,
    bcryptRounds: config.bcryptRounds,
    rolesSyncedFromIdp: config.authProvider !== 'local' && config.syncRolesOnLogin,
  });
  const apiKeys = createApiKeysService({ db, audit, clock, bus });
  const auth = createAuthService({
    db,
    clock,
    tokens: deps.tokens,
    users,
    maxAttempts: config.loginMaxAttempts,
    lockoutMinutes: config.loginLockoutMinutes,
  });
  return { users, apiKeys, auth };
}

export type Services = ReturnType<typeof createServices>;
