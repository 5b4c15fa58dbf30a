import type { Logger } from 'pino';
import type { IdpConfig } from '../../../config.js';
import type { Actor } from '../../../platform/auth.js';
import type { Clock } from '../../../platform/clock.js';
import { ServiceUnavailable, Unauthorized } from '../../../platform/errors.js';
import { claimsTrue, type IdpAccountsService, type LinkRefusal, type ProviderRoles } from '../../users/idp-accounts.js';
import {
  NEW_PASSWORD_REQUIRED,
  UNREACHABLE,
  UNREACHABLE_RETRY_AFTER_SECONDS,
  UNSUPPORTED_CHALLENGE,
  createProviderClient,
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
      log: (failure) => log.warn(failure, 'identity provider request failed'),
    });
  /** First requests of one new subject in this process share one provider lookup and one insert. */
  const firstSights = new Map<string, Promise<Actor>>();

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
