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
 * Local sign-in. Failed attempts are counted per email in any letter case (folded as the database folds it),
 * whatever account (if any) it names; with `maxAttempts` failures inside the window the email is locked (423,
 * Retry-After) until the oldest of them leaves the window. A successful sign-in clears the count.
 *
 * Every attempt is counted as a failure before its password is checked, under a lock on the email, so concurrent
 * wrong passwords cannot all pass the check before any of them is recorded; a right password takes its count back.
 */
export function createAuthService(deps: AuthDeps) {
  const windowMs = deps.lockoutMinutes * 60_000;

  function lockedFor(failures: Date[], now: Date): number | undefined {
    if (failures.length < deps.maxAttempts) return undefined;
    const releaseAt = failures[failures.length - deps.maxAttempts].getTime() + windowMs;
    return Math.max(1, Math.ceil((releaseAt - now.getTime()) / 1000));
  }

  /** Counts the attempt, or answers how long the email stays locked. */
  function admitAttempt(email: string, now: Date) {
    return deps.db.transaction(async (tx) => {
      await store.lockEmail(tx, email);
      const retryAfter = lockedFor(await store.failuresSince(tx, email, new Date(now.getTime() - windowMs)), now);
      if (retryAfter !== undefined) return { retryAfter };
      return { attemptId: await store.recordFailure(tx, email, now) };
    });
  }

  return {
    async login(rawEmail: string, password: string): Promise<TokenResponse> {
      const email = rawEmail.trim();
      const now = deps.clock.now();
      const attempt = await admitAttempt(email, now);
      if (attempt.attemptId === undefined) throw new Locked(ACCOUNT_LOCKED, attempt.retryAfter);
      const user = await deps.users.verifyCredentials(email, password);
      if (!user) throw new Unauthorized(WRONG_LOGIN);
      if (!user.isActive) {
        await store.deleteFailure(deps.db, attempt.attemptId);
        throw new BadRequest(INACTIVE_USER);
      }
      await store.clearFailures(deps.db, email);
      await deps.users.recordLogin(user.id);
      const { token, expiresIn } = await deps.tokens.issue(user.id);
      return { access_token: token, token_type: 'bearer', expires_in: expiresIn };
    },

    /** Scheduler housekeeping: failures that left the window no longer count. */
    pruneFailures: (now: Date = deps.clock.now()) => store.pruneFailures(deps.db, new Date(now.getTime() - windowMs)),
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
