import {
  AdminListGroupsForUserCommand,
  CognitoIdentityProviderClient,
  ConfirmForgotPasswordCommand,
  ConfirmSignUpCommand,
  ForgotPasswordCommand,
  GetUserCommand,
  InitiateAuthCommand,
  ListUsersCommand,
  SignUpCommand,
  type AuthenticationResultType,
  type CodeDeliveryDetailsType,
} from '@aws-sdk/client-cognito-identity-provider';
import {
  BadRequest,
  Conflict,
  DomainError,
  Forbidden,
  ServiceUnavailable,
  TooManyRequests,
  Unauthorized,
} from '../../../platform/errors.js';

export const SIGN_IN_FAILED = 'Incorrect username or password';
export const NEW_PASSWORD_REQUIRED =
  'A new password must be set first: this account has a temporary password. Set a new password with the identity provider, then sign in again.';
export const NOT_CONFIRMED = 'This account is not confirmed yet: confirm it with the code that was sent, then sign in';
export const PASSWORD_RESET_REQUIRED = 'A password reset is required for this account: request a code through forgot-password';
export const UNSUPPORTED_CHALLENGE = 'This account needs a sign-in step (such as multi-factor authentication) the API does not support';
export const REFRESH_FAILED = 'Invalid or expired refresh token';
export const USERNAME_EXISTS = 'An account with this username already exists';
export const ALIAS_EXISTS = 'An account with this email address already exists';
export const BAD_CODE = 'Invalid confirmation code';
export const EXPIRED_CODE = 'The confirmation code has expired; request a new one';
export const WEAK_PASSWORD = 'The password does not meet the password policy';
export const REUSED_PASSWORD = 'The new password was used recently; choose another one';
export const CANNOT_CONFIRM = 'This account cannot be confirmed (it may be confirmed already)';
export const INVALID_REQUEST = 'The identity provider refused the request as invalid';
export const SIGNUP_REFUSED = 'The identity provider refused the sign-up';
export const SIGNUP_NOT_ALLOWED = 'Self sign-up is not allowed by the identity provider';
export const RESET_NOT_ALLOWED = "The password cannot be reset in the account's current state";
export const TOO_MANY_ATTEMPTS = 'Too many attempts; try again later';
export const THROTTLED = 'The identity provider is busy; try again later';
export const UNREACHABLE = 'The identity provider is unreachable; try again later';
export const PROVIDER_FAILED = 'The identity provider could not complete the request';
export const CODE_DELIVERY_FAILED = 'The identity provider could not deliver the confirmation code';

/**
 * ForgotPassword errors only an existing account gets: a state that cannot be reset (NotAuthorizedException), no
 * verified email or phone (InvalidParameterException), its own attempt limit (LimitExceededException), a pre-sign-up
 * trigger's refusal and a code that could not be delivered.
 */
const ACCOUNT_DEPENDENT_RESET_ERRORS = new Set([
  'NotAuthorizedException',
  'InvalidParameterException',
  'LimitExceededException',
  'UserLambdaValidationException',
  'CodeDeliveryFailureException',
]);

/** Seconds a client is told to wait after throttling when the provider names no time. */
const DEFAULT_RETRY_AFTER_SECONDS = 5;
export const UNREACHABLE_RETRY_AFTER_SECONDS = 5;

export type Operation = 'signIn' | 'refresh' | 'getUser' | 'signUp' | 'confirm' | 'forgotPassword' | 'resetPassword' | 'ownerStanding';

/** What the provider says of an API key's owner now: gone (removed or disabled), or present with these groups. */
export type OwnerStanding = { present: false } | { present: true; groups: string[] };

/** Pages of groups read for one user (60 a page); a user in more groups than this is judged on these. */
const MAX_GROUP_PAGES = 10;

export interface ProviderTokens {
  accessToken: string;
  expiresIn: number;
  refreshToken: string | undefined;
}

export type SignInOutcome = { kind: 'tokens'; tokens: ProviderTokens } | { kind: 'challenge'; name: string };

export interface ProviderUser {
  username: string;
  attributes: Record<string, string>;
}

export interface CodeDelivery {
  destination: string | null;
  medium: string | null;
  attribute: string | null;
}

/** What a provider error leaves behind when it is not turned into an answer for the client (for the log). */
export interface ProviderFailure {
  operation: Operation;
  name: string;
  status: number;
}

interface SdkError {
  name?: string;
  message?: string;
  $fault?: 'client' | 'server';
  $metadata?: { httpStatusCode?: number };
  $response?: { headers?: Record<string, string> };
}

function retryAfter(error: SdkError): number {
  const raw = Number(error.$response?.headers?.['retry-after']);
  return Number.isFinite(raw) && raw > 0 ? raw : DEFAULT_RETRY_AFTER_SECONDS;
}

/** The provider's password-policy sentence names only policy rules; anything else is not shown. */
function weakPassword(message: string | undefined): BadRequest {
  const rule = /^Password did not conform with policy: ([A-Za-z0-9 ,.]{1,120})$/.exec(message ?? '')?.[1];
  return new BadRequest(rule ? `${WEAK_PASSWORD}: ${rule}` : WEAK_PASSWORD);
}

/**
 * NotAuthorizedException is the provider's catch-all refusal: a wrong password only when signing in. On the account
 * routes it means the pool forbids the action there (e.g. "SignUp is not permitted for this user pool", "User password
 * cannot be reset in the current state"); that text may name the user, so each operation answers a fixed sentence.
 */
function notAuthorized(operation: Operation): DomainError {
  switch (operation) {
    case 'signIn':
      return new Unauthorized(SIGN_IN_FAILED);
    case 'refresh':
      return new Unauthorized(REFRESH_FAILED);
    case 'getUser':
      return new Unauthorized();
    case 'ownerStanding':
      // The pool refuses Uplift's own credentials: configuration, not the owner's standing.
      return new ServiceUnavailable(PROVIDER_FAILED);
    case 'signUp':
      return new Forbidden(SIGNUP_NOT_ALLOWED);
    case 'confirm':
      return new BadRequest(CANNOT_CONFIRM);
    case 'forgotPassword':
    case 'resetPassword':
      return new BadRequest(RESET_NOT_ALLOWED);
  }
}

/**
 * Provider errors as clear answers: never a 500 and never the provider's own message (it can name the pool,
 * its triggers or its configuration). What a client cannot fix (configuration, triggers, outages) is 503 and logged.
 */
export function providerError(operation: Operation, raw: unknown, log: (failure: ProviderFailure) => void): DomainError {
  const error = raw as SdkError;
  const name = error.$fault ? error.name ?? 'Unknown' : 'Unreachable';
  const signingIn = operation === 'signIn';
  switch (name) {
    case 'NotAuthorizedException':
      return notAuthorized(operation);
    case 'UserNotFoundException':
      if (signingIn) return new Unauthorized(SIGN_IN_FAILED);
      if (operation === 'ownerStanding') return new ServiceUnavailable(PROVIDER_FAILED);
      if (operation === 'getUser') return new Unauthorized();
      return new BadRequest(BAD_CODE);
    case 'UserNotConfirmedException':
      return new Unauthorized(NOT_CONFIRMED);
    case 'PasswordResetRequiredException':
      return new Unauthorized(PASSWORD_RESET_REQUIRED);
    case 'UsernameExistsException':
      return new Conflict(USERNAME_EXISTS);
    case 'AliasExistsException':
      return new Conflict(ALIAS_EXISTS);
    case 'CodeMismatchException':
      return new BadRequest(BAD_CODE);
    case 'ExpiredCodeException':
      return new BadRequest(EXPIRED_CODE);
    case 'InvalidPasswordException':
      return weakPassword(error.message);
    case 'PasswordHistoryPolicyViolationException':
      return new BadRequest(REUSED_PASSWORD);
    case 'UserLambdaValidationException':
      return new BadRequest(SIGNUP_REFUSED);
    case 'InvalidParameterException':
      // Also how the provider says an auth flow is not enabled for the app client: worth a log line.
      log({ operation, name, status: 400 });
      return new BadRequest(INVALID_REQUEST);
    case 'LimitExceededException':
    case 'TooManyFailedAttemptsException':
      return new TooManyRequests(retryAfter(error), TOO_MANY_ATTEMPTS);
    case 'TooManyRequestsException':
      return new TooManyRequests(retryAfter(error), THROTTLED);
    case 'CodeDeliveryFailureException':
      log({ operation, name, status: 503 });
      return new ServiceUnavailable(CODE_DELIVERY_FAILED);
    case 'Unreachable':
      log({ operation, name: (raw as Error)?.name ?? 'Error', status: 503 });
      return new ServiceUnavailable(UNREACHABLE, UNREACHABLE_RETRY_AFTER_SECONDS);
    default:
      log({ operation, name, status: 503 });
      return new ServiceUnavailable(PROVIDER_FAILED);
  }
}

function delivery(details: CodeDeliveryDetailsType | undefined): CodeDelivery | null {
  if (!details) return null;
  return { destination: details.Destination ?? null, medium: details.DeliveryMedium ?? null, attribute: details.AttributeName ?? null };
}

function tokensOf(result: AuthenticationResultType | undefined): ProviderTokens | undefined {
  if (!result?.AccessToken) return undefined;
  return { accessToken: result.AccessToken, expiresIn: result.ExpiresIn ?? 3600, refreshToken: result.RefreshToken };
}

/**
 * The provider's public (unsigned) API through the AWS SDK: the operations an app client calls on behalf of a user.
 * One attempt per call: a throttled or unreachable provider is answered at once (429/503 with Retry-After) rather
 * than held while the SDK backs off.
 */
export function createProviderClient(opts: {
  region: string;
  endpoint: string | undefined;
  clientId: string;
  userPoolId: string;
  log: (failure: ProviderFailure) => void;
}) {
  const client = new CognitoIdentityProviderClient({
    region: opts.region,
    endpoint: opts.endpoint,
    maxAttempts: 1,
    requestHandler: { connectionTimeout: 3_000, requestTimeout: 10_000 },
  });
  const call = async <T>(operation: Operation, run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      if (error instanceof DomainError) throw error;
      throw providerError(operation, error, opts.log);
    }
  };
  const ClientId = opts.clientId;

  return {
    signIn: (username: string, password: string) =>
      call('signIn', async (): Promise<SignInOutcome> => {
        const out = await client.send(new InitiateAuthCommand({
          ClientId, AuthFlow: 'USER_PASSWORD_AUTH', AuthParameters: { USERNAME: username, PASSWORD: password },
        }));
        const tokens = tokensOf(out.AuthenticationResult);
        if (tokens) return { kind: 'tokens', tokens };
        return { kind: 'challenge', name: out.ChallengeName ?? 'UNKNOWN' };
      }),

    refresh: (refreshToken: string) =>
      call('refresh', async () => {
        const out = await client.send(new InitiateAuthCommand({
          ClientId, AuthFlow: 'REFRESH_TOKEN_AUTH', AuthParameters: { REFRESH_TOKEN: refreshToken },
        }));
        const tokens = tokensOf(out.AuthenticationResult);
        if (!tokens) throw new Unauthorized(REFRESH_FAILED);
        return tokens;
      }),

    getUser: (accessToken: string) =>
      call('getUser', async (): Promise<ProviderUser> => {
        const out = await client.send(new GetUserCommand({ AccessToken: accessToken }));
        const attributes: Record<string, string> = {};
        for (const a of out.UserAttributes ?? []) if (a.Name) attributes[a.Name] = a.Value ?? '';
        return { username: out.Username ?? '', attributes };
      }),

    signUp: (body: { username: string; email: string; password: string; given_name?: string; family_name?: string }) =>
      call('signUp', async () => {
        const attributes = [
          { Name: 'email', Value: body.email },
          ...(body.given_name ? [{ Name: 'given_name', Value: body.given_name }] : []),
          ...(body.family_name ? [{ Name: 'family_name', Value: body.family_name }] : []),
        ];
        const out = await client.send(new SignUpCommand({
          ClientId, Username: body.username, Password: body.password, UserAttributes: attributes,
        }));
        return { userSub: out.UserSub ?? null, userConfirmed: out.UserConfirmed ?? false, delivery: delivery(out.CodeDeliveryDetails) };
      }),

    confirm: (username: string, code: string) =>
      call('confirm', async () => {
        await client.send(new ConfirmSignUpCommand({ ClientId, Username: username, ConfirmationCode: code }));
      }),

    /**
     * Resolves alike whether or not the account exists, so the route cannot be used to probe for accounts: the
     * provider's answers that only an existing account can get (where the code went, a refusal in the account's
     * state, its attempt limit, a failed delivery) are kept from the caller, and logged when the operator may care.
     * What does not depend on the account (throttling of the whole client, an unreachable provider) still shows.
     */
    forgotPassword: (username: string) =>
      call('forgotPassword', async (): Promise<void> => {
        try {
          await client.send(new ForgotPasswordCommand({ ClientId, Username: username }));
        } catch (error) {
          const name = (error as SdkError).$fault ? (error as SdkError).name : undefined;
          if (name === 'UserNotFoundException') return;
          if (name && ACCOUNT_DEPENDENT_RESET_ERRORS.has(name)) {
            opts.log({ operation: 'forgotPassword', name, status: 200 });
            return;
          }
          throw error;
        }
      }),

    resetPassword: (username: string, code: string, newPassword: string) =>
      call('resetPassword', async () => {
        await client.send(new ConfirmForgotPasswordCommand({
          ClientId, Username: username, ConfirmationCode: code, Password: newPassword,
        }));
      }),

    /**
     * An API key owner's standing, by subject: the pool's user with that `sub` (absent or disabled: gone) and its
     * groups. These are the pool's administrative operations, signed with the credentials of Uplift's environment.
     */
    ownerStanding: (subject: string) =>
      call('ownerStanding', async (): Promise<OwnerStanding> => {
        // A subject is the provider's UUID; anything else cannot be quoted safely into the filter and names no one.
        if (!/^[A-Za-z0-9-]{1,128}$/.test(subject)) return { present: false };
        const UserPoolId = opts.userPoolId;
        const found = await client.send(new ListUsersCommand({ UserPoolId, Filter: `sub = "${subject}"`, Limit: 1 }));
        const user = found.Users?.[0];
        if (!user?.Username || user.Enabled === false) return { present: false };
        const groups: string[] = [];
        let NextToken: string | undefined;
        for (let page = 0; page < MAX_GROUP_PAGES; page += 1) {
          try {
            const out = await client.send(new AdminListGroupsForUserCommand({ UserPoolId, Username: user.Username, Limit: 60, NextToken }));
            for (const g of out.Groups ?? []) if (g.GroupName) groups.push(g.GroupName);
            NextToken = out.NextToken;
          } catch (error) {
            // Removed between the two calls.
            if ((error as SdkError).name === 'UserNotFoundException') return { present: false };
            throw error;
          }
          if (!NextToken) break;
        }
        return { present: true, groups };
      }),

    close: () => client.destroy(),
  };
}

export type ProviderClient = ReturnType<typeof createProviderClient>;
