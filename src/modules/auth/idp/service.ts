import type { Logger } from 'pino';
import type { IdpConfig } from '../../../config.js';
import type { Actor, KeyClient } from '../../../platform/auth.js';
import type { Clock } from '../../../platform/clock.js';
import { DomainError, ServiceUnavailable, Unauthorized } from '../../../platform/errors.js';
import { localCache } from '../../../platform/local-cache.js';
import { claimsTrue, type IdpAccountsService, type LinkRefusal, type ProviderRoles } from '../../users/idp-accounts.js';
import {
  NEW_PASSWORD_REQUIRED,
  UNREACHABLE,
  UNREACHABLE_RETRY_AFTER_SECONDS,
  UNSUPPORTED_CHALLENGE,
  createProviderClient,
  type OwnerStanding,
  type ProviderClient,
} from './provider.js';
import { groupsClaim, rolesFromGroups } from './roles.js';
import { createAccessTokenVerifier, type AccessTokenVerifier } from './verifier.js';

export const NOT_CONFIGURED = 'The identity provider is not configured (IDP_USER_POOL_ID and IDP_CLIENT_ID)';

/** Every reason a bearer token or sign-in is refused in identity-provider mode, as logged (never the token). */
export type RefusalReason =
  | 'not_configured'
  | 'wrong_issuer'
  | 'invalid_token'
  | 'no_sub'
  | 'provider_refused'
  | 'inactive'
  | LinkRefusal;

export interface IdpTokenResponse {
  access_token: string;
  token_type: 'bearer';
  expires_in: number;
  refresh_token?: string;
}

export interface IdpAuthDeps {
  idp: IdpConfig;
  syncRolesOnLogin: boolean;
  accounts: IdpAccountsService;
  recordLogin: (userId: string) => Promise<unknown>;
  log: Logger;
  clock: Clock;
}

export type IdpAuthService = ReturnType<typeof createIdpAuthService>;

/** After a failed re-check the provider is asked again at most this often (the last answer stands meanwhile). */
const RECHECK_AFTER_FAILURE_MS = 30_000;
/** Owners whose standing one process remembers. */
const STANDING_LIMIT = 10_000;

/** The provider's last answer about an API key owner: `local` for an account not linked to the provider. */
interface Standing {
  answer: OwnerStanding | { local: true };
  checkedAt: number;
  /** After a failed re-check: when to ask again. */
  retryAt?: number;
}

/**
 * Identity-provider mode (AUTH_PROVIDER=cognito): the provider's access tokens are the bearer tokens. Each request
 * verifies the token, finds (or on first sight creates) the linked account and, with SYNC_ROLES_ON_LOGIN, applies
 * the role the token's groups give. Sign-in, refresh and the account routes go to the provider.
 */
export function createIdpAuthService(deps: IdpAuthDeps) {
  const { idp, log } = deps;
  const { userPoolId, clientId, region } = idp;
  const configured = userPoolId && clientId && region ? { userPoolId, clientId, region } : undefined;
  const verify: AccessTokenVerifier | undefined =
    configured && createAccessTokenVerifier({
      ...configured,
      issuer: idp.issuer,
      jwksUrl: idp.jwksUrl,
      now: () => deps.clock.now().getTime(),
    });
  const provider: ProviderClient | undefined =
    configured &&
    createProviderClient({
      region: configured.region,
      endpoint: idp.endpoint,
      clientId: configured.clientId,
      userPoolId: configured.userPoolId,
      log: (failure) => log.warn(failure, 'identity provider request failed'),
    });
  /** First requests of one new subject in this process share one provider lookup and one insert. */
  const firstSights = new Map<string, Promise<Actor>>();
  const revalidateMs = idp.revalidateSeconds * 1000;
  const graceMs = idp.revalidateGraceSeconds * 1000;
  const standings = localCache<string, Standing>({ max: STANDING_LIMIT, ttlMs: revalidateMs + graceMs, now: () => deps.clock.now().getTime() });
  const checks = new Map<string, Promise<Standing>>();

  /** Asks the provider about the owner; on failure keeps the last answer within the grace, else refuses with 503. */
  async function check(userId: string, last: Standing | undefined, now: number): Promise<Standing> {
    try {
      const subject = await deps.accounts.subjectOf(userId);
      const answer: Standing['answer'] = subject === undefined ? { local: true } : await requireProvider().ownerStanding(subject);
      const fresh: Standing = { answer, checkedAt: now };
      standings.set(userId, fresh);
      if ('present' in answer && answer.present && deps.syncRolesOnLogin) {
        // The groups now give this role: the account follows (once per change), as at the owner's next sign-in.
        await deps.accounts.syncRoles(userId, rolesFromGroups(answer.groups, idp), answer.groups);
      }
      return fresh;
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      if (!last || now - last.checkedAt >= revalidateMs + graceMs) {
        log.warn({ user_id: userId }, 'API key owner could not be re-checked with the identity provider; key refused');
        throw new ServiceUnavailable(UNREACHABLE, UNREACHABLE_RETRY_AFTER_SECONDS);
      }
      const kept: Standing = { ...last, retryAt: now + RECHECK_AFTER_FAILURE_MS };
      standings.set(userId, kept);
      return kept;
    }
  }

  /**
   * IDP_REVALIDATE_SECONDS: an API key works only while the provider still vouches for its owner. A use after the
   * interval re-checks the owner (one call for all concurrent uses); the answer is remembered. An owner removed or
   * disabled at the provider makes the key refused (401); with SYNC_ROLES_ON_LOGIN the key acts with the role the
   * owner's groups give now. A provider outage keeps the last answer for IDP_REVALIDATE_GRACE_SECONDS more.
   */
  async function revalidateOwner(client: KeyClient): Promise<KeyClient | undefined> {
    const now = deps.clock.now().getTime();
    let standing = standings.get(client.userId);
    const due = !standing || (standing.retryAt ?? standing.checkedAt + revalidateMs) <= now || now - standing.checkedAt >= revalidateMs + graceMs;
    if (due) {
      let pending = checks.get(client.userId);
      if (!pending) {
        pending = check(client.userId, standing, now).finally(() => checks.delete(client.userId));
        checks.set(client.userId, pending);
      }
      standing = await pending;
    }
    const { answer } = standing!;
    if ('local' in answer) return client;
    if (!answer.present) return undefined;
    if (!deps.syncRolesOnLogin) return client;
    const roles = rolesFromGroups(answer.groups, idp);
    return { ...client, ownerRole: roles.role, ownerIsSuperuser: roles.isSuperuser };
  }

  function refuse(reason: RefusalReason, extra: Record<string, unknown> = {}): never {
    log.info({ reason, ...extra }, 'identity-provider sign-in refused');
    throw new Unauthorized();
  }

  function requireProvider(): ProviderClient {
    if (!provider) throw new ServiceUnavailable(NOT_CONFIGURED);
    return provider;
  }

  /**
   * `tokenSays` is the token's own `email_verified` claim: an access token of the pool carries none, and then the
   * provider's record (GetUser) says whether the email is verified.
   */
  async function firstSight(client: ProviderClient, subject: string, token: string, tokenSays: unknown, roles: ProviderRoles): Promise<Actor> {
    let user;
    try {
      user = await client.getUser(token);
    } catch (error) {
      if (error instanceof Unauthorized) refuse('provider_refused', { subject });
      throw error;
    }
    const attr = (name: string) => user.attributes[name]?.trim() || undefined;
    const outcome = await deps.accounts.create(
      subject,
      {
        username: user.username,
        email: attr('email'),
        emailVerified: claimsTrue(tokenSays ?? user.attributes.email_verified),
        givenName: attr('given_name'),
        familyName: attr('family_name'),
      },
      roles,
    );
    if ('refused' in outcome) {
      if (outcome.error) log.error({ err: outcome.error, subject }, 'identity-provider account could not be saved');
      refuse(outcome.refused, { subject });
    }
    return outcome.actor;
  }

  async function verifyBearer(token: string): Promise<Actor> {
    if (!verify || !provider) refuse('not_configured');
    const verified = await verify(token);
    if (!verified.ok) {
      if (verified.reason === 'keys_unreachable') {
        log.warn({ error: verified.error }, 'identity provider signing keys could not be read');
        throw new ServiceUnavailable(UNREACHABLE, UNREACHABLE_RETRY_AFTER_SECONDS);
      }
      refuse(verified.reason, verified.error ? { error: verified.error } : {});
    }
    const { payload } = verified;
    const subject = payload.sub;
    if (typeof subject !== 'string' || !subject) refuse('no_sub');
    const groups = groupsClaim(payload);
    const roles = rolesFromGroups(groups, idp);
    let actor = await deps.accounts.linked(subject);
    if (!actor) {
      let pending = firstSights.get(subject);
      if (!pending) {
        pending = firstSight(provider, subject, token, payload.email_verified, roles).finally(() => firstSights.delete(subject));
        firstSights.set(subject, pending);
      }
      actor = await pending;
    }
    if (!actor.isActive) refuse('inactive', { subject });
    if (deps.syncRolesOnLogin && (actor.role !== roles.role || actor.isSuperuser !== roles.isSuperuser)) {
      actor = (await deps.accounts.syncRoles(actor.id, roles, groups)) ?? refuse('inactive', { subject });
    }
    return actor;
  }

  return {
    verifyBearer,
    revalidateOwner,

    /** POST /auth/token and /auth/login: the provider checks the password; its access token is the answer. */
    async signIn(username: string, password: string): Promise<IdpTokenResponse> {
      if (!provider) refuse('not_configured');
      const outcome = await provider.signIn(username, password);
      if (outcome.kind === 'challenge') {
        throw new Unauthorized(outcome.name === 'NEW_PASSWORD_REQUIRED' ? NEW_PASSWORD_REQUIRED : UNSUPPORTED_CHALLENGE);
      }
      const { tokens } = outcome;
      const actor = await verifyBearer(tokens.accessToken);
      await deps.recordLogin(actor.id);
      return {
        access_token: tokens.accessToken,
        token_type: 'bearer',
        expires_in: tokens.expiresIn,
        ...(tokens.refreshToken ? { refresh_token: tokens.refreshToken } : {}),
      };
    },

    async refresh(refreshToken: string): Promise<IdpTokenResponse> {
      if (!provider) refuse('not_configured');
      const tokens = await provider.refresh(refreshToken);
      return { access_token: tokens.accessToken, token_type: 'bearer', expires_in: tokens.expiresIn };
    },

    /** GET /auth/me: the provider's own record of the caller. */
    async me(token: string | undefined) {
      if (!token) throw new Unauthorized();
      return requireProvider().getUser(token);
    },

    async signUp(body: Parameters<ProviderClient['signUp']>[0]) {
      const out = await requireProvider().signUp(body);
      return { user_sub: out.userSub, user_confirmed: out.userConfirmed, code_delivery: out.delivery };
    },
    confirm: (username: string, code: string) => requireProvider().confirm(username, code),
    forgotPassword: (username: string) => requireProvider().forgotPassword(username),
    resetPassword: (username: string, code: string, newPassword: string) => requireProvider().resetPassword(username, code, newPassword),

    /** Where refusals are logged (tests watch it). */
    log,
    close: () => provider?.close(),
  };
}
