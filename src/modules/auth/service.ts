import type { Db } from '../../db/client.js';
import type { Actor, Authenticator, KeyClient } from '../../platform/auth.js';
import type { Clock } from '../../platform/clock.js';
import { BadRequest, Locked, Unauthorized } from '../../platform/errors.js';
import type { TokenService } from '../../platform/tokens.js';
import { INACTIVE_USER, type UsersService } from '../users/service.js';
import * as store from './store.js';

export const WRONG_LOGIN = 'Incorrect email or password';
export const ACCOUNT_LOCKED = 'Too many failed sign-in attempts. Try again later.';

export interface AuthDeps {
  db: Db;
  clock: Clock;
  tokens: TokenService;
  users: UsersService;
  maxAttempts: number;
  lockoutMinutes: number;
}

export interface TokenResponse {
  access_token: string;
  token_type: 'bearer';
  expires_in: number;
}

export type AuthService = ReturnType<typeof createAuthService>;

/**
 * Local sign-in. Failed attempts are counted per email in any letter case, whatever account (if any) it names;
 * with `maxAttempts` failures inside the window the email is locked (423, Retry-After) until the oldest of them
 * leaves the window. A successful sign-in clears the count.
 */
export function createAuthService(deps: AuthDeps) {
  const windowMs = deps.lockoutMinutes * 60_000;

  async function lockedFor(emailKey: string, now: Date): Promise<number | undefined> {
    const failures = await store.failuresSince(deps.db, emailKey, new Date(now.getTime() - windowMs));
    if (failures.length < deps.maxAttempts) return undefined;
    const releaseAt = failures[failures.length - deps.maxAttempts].getTime() + windowMs;
    return Math.max(1, Math.ceil((releaseAt - now.getTime()) / 1000));
  }

  return {
    async login(email: string, password: string): Promise<TokenResponse> {
      const emailKey = email.trim().toLowerCase();
      const now = deps.clock.now();
      const retryAfter = await lockedFor(emailKey, now);
      if (retryAfter !== undefined) throw new Locked(ACCOUNT_LOCKED, retryAfter);
      const user = await deps.users.verifyCredentials(email.trim(), password);
      if (!user) {
        await store.recordFailure(deps.db, emailKey, now);
        throw new Unauthorized(WRONG_LOGIN);
      }
      if (!user.isActive) throw new BadRequest(INACTIVE_USER);
      await store.clearFailures(deps.db, emailKey);
      await deps.users.recordLogin(user.id);
      const { token, expiresIn } = await deps.tokens.issue(user.id);
      return { access_token: token, token_type: 'bearer', expires_in: expiresIn };
    },

    pruneFailures: () => store.pruneFailures(deps.db, new Date(deps.clock.now().getTime() - windowMs)),
  };
}

/** Bearer tokens issued by this service and API keys: the authenticator of the local provider. */
export function createLocalAuthenticator(deps: {
  tokens: TokenService;
  loadActor: (id: string) => Promise<Actor | undefined>;
  resolveApiKey: (raw: string) => Promise<KeyClient | undefined>;
}): Authenticator {
  return {
    async verifyBearer(token) {
      const userId = await deps.tokens.verify(token);
      // A deactivated or deleted account's tokens stop working at once (rule 9).
      const actor = userId ? await deps.loadActor(userId) : undefined;
      if (!actor) throw new Unauthorized();
      return actor;
    },
    resolveApiKey: deps.resolveApiKey,
  };
}
