/**
 * A local stand-in for the identity provider: one HTTP server on 127.0.0.1 (port 0) that serves the pool's JWKS
 * under `<issuer>/.well-known/jwks.json` and answers the JSON 1.1 actions Uplift calls (InitiateAuth with
 * USER_PASSWORD_AUTH and REFRESH_TOKEN_AUTH, GetUser, SignUp, ConfirmSignUp, ForgotPassword, ConfirmForgotPassword, and
 * the administrative ListUsers by sub and AdminListGroupsForUser).
 * Tokens are RS256 JWTs signed with a test key; tests sign their own with `token()`.
 */
import { createSign, generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const POOL_ID = 'us-east-1_TestPool1';
export const CLIENT_ID = 'uplift-test-client';

interface SigningKey {
  kid: string;
  privateKey: KeyObject;
  publicJwk: Record<string, unknown>;
}

export interface FakeUser {
  username: string;
  sub: string;
  password: string;
  attributes: Record<string, string>;
  groups: string[];
  status: 'CONFIRMED' | 'UNCONFIRMED' | 'FORCE_CHANGE_PASSWORD';
  /** false: disabled by an administrator. */
  enabled: boolean;
  code?: string;
}

export interface Failure {
  type: string;
  message?: string;
  status?: number;
  headers?: Record<string, string>;
}

export interface TokenClaims {
  sub?: string | null;
  username?: string;
  groups?: string[];
  tokenUse?: 'access' | 'id';
  clientId?: string;
  issuer?: string;
  expiresInSeconds?: number;
  kid?: string;
  /** Sign with this key (e.g. one the JWKS does not hold) while naming `kid`. */
  signWith?: KeyObject;
  extra?: Record<string, unknown>;
}

function newKey(): SigningKey {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const kid = randomUUID();
  return { kid, privateKey, publicJwk: { ...publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' } };
}

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

export function signJwt(header: Record<string, unknown>, payload: Record<string, unknown>, key: KeyObject): string {
  const input = `${b64url(header)}.${b64url(payload)}`;
  const signature = createSign('RSA-SHA256').update(input).sign(key).toString('base64url');
  return `${input}.${signature}`;
}

export class FakeIdp {
  readonly users = new Map<string, FakeUser>();
  /** Every action called, in order, with its body. */
  readonly calls: Array<{ action: string; body: Record<string, unknown> }> = [];
  jwksRequests = 0;
  /** JWKS requests still to be answered by closing the connection (see dropJwks). */
  private jwksDrops = 0;
  private keys: SigningKey[] = [newKey()];
  private readonly refreshTokens = new Map<string, string>();
  private readonly failures = new Map<string, Failure>();
  /** Actions that answer an error until `recover()`: an outage. */
  private readonly outages = new Map<string, Failure>();
  private server!: Server;
  port = 0;

  static async start(): Promise<FakeIdp> {
    const idp = new FakeIdp();
    idp.server = createServer((req, res) => void idp.handle(req, res));
    await new Promise<void>((resolve) => idp.server.listen(0, '127.0.0.1', resolve));
    idp.port = (idp.server.address() as AddressInfo).port;
    return idp;
  }

  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get issuer(): string {
    return `${this.endpoint}/${POOL_ID}`;
  }

  /** The settings that point Uplift at this provider. */
  env(extra: Record<string, string> = {}): Record<string, string> {
    return {
      AUTH_PROVIDER: 'cognito',
      IDP_USER_POOL_ID: POOL_ID,
      IDP_CLIENT_ID: CLIENT_ID,
      IDP_ISSUER: this.issuer,
      IDP_ENDPOINT: this.endpoint,
      ...extra,
    };
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** The next `count` JWKS requests see their connection closed with no answer (a kept-alive connection dropped). */
  dropJwks(count: number): void {
    this.jwksDrops = count;
  }

  /** A new signing key with a new kid; the JWKS serves it next to the old one (or alone). */
  rotate(opts: { dropOld?: boolean } = {}): void {
    const fresh = newKey();
    this.keys = opts.dropOld ? [fresh] : [fresh, ...this.keys];
  }

  get currentKid(): string {
    return this.keys[0].kid;
  }

  /** The next call of `action` answers this error instead. */
  failNext(action: string, failure: Failure): void {
    this.failures.set(action, failure);
  }

  /** Every call of `action` answers this error until `recover(action)`. */
  failUntilRecovered(action: string, failure: Failure): void {
    this.outages.set(action, failure);
  }

  recover(action: string): void {
    this.outages.delete(action);
  }

  callsOf(action: string) {
    return this.calls.filter((c) => c.action === action);
  }

  addUser(opts: Partial<FakeUser> & { username: string }): FakeUser {
    const user: FakeUser = {
      sub: randomUUID(),
      password: 'Prov1der-Pass',
      attributes: {},
      groups: [],
      status: 'CONFIRMED',
      enabled: true,
      ...opts,
    };
    // As the provider records it: a confirmed user's email is verified unless the test says otherwise.
    const verified: Record<string, string> = user.status === 'CONFIRMED' && user.attributes.email !== undefined ? { email_verified: 'true' } : {};
    user.attributes = { sub: user.sub, ...verified, ...user.attributes };
    this.users.set(user.username, user);
    return user;
  }

  /** An access token (by default) for the user, signed with the current key. */
  token(user: FakeUser | undefined, claims: TokenClaims = {}): string {
    const now = Math.floor(Date.now() / 1000);
    const key = this.keys[0];
    const groups = claims.groups ?? user?.groups ?? [];
    const tokenUse = claims.tokenUse ?? 'access';
    const payload: Record<string, unknown> = {
      ...(claims.sub === null ? {} : { sub: claims.sub ?? user?.sub ?? randomUUID() }),
      iss: claims.issuer ?? this.issuer,
      token_use: tokenUse,
      ...(tokenUse === 'access'
        ? { client_id: claims.clientId ?? CLIENT_ID, username: claims.username ?? user?.username, scope: 'aws.cognito.signin.user.admin' }
        : { aud: claims.clientId ?? CLIENT_ID, 'cognito:username': user?.username, email: user?.attributes.email }),
      ...(groups.length ? { 'cognito:groups': groups } : {}),
      auth_time: now,
      iat: now,
      exp: now + (claims.expiresInSeconds ?? 3600),
      jti: randomUUID(),
      ...claims.extra,
    };
    return signJwt({ kid: claims.kid ?? key.kid, alg: 'RS256' }, payload, claims.signWith ?? key.privateKey);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method === 'GET' && req.url?.endsWith('/.well-known/jwks.json')) {
      this.jwksRequests += 1;
      if (this.jwksDrops > 0) {
        this.jwksDrops -= 1;
        req.socket.destroy();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ keys: this.keys.map((k) => k.publicJwk) }));
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const target = String(req.headers['x-amz-target'] ?? '');
    const action = target.split('.').pop() ?? '';
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    } catch {
      return this.error(res, { type: 'SerializationException' });
    }
    this.calls.push({ action, body });
    const failure = this.failures.get(action) ?? this.outages.get(action);
    if (failure) {
      this.failures.delete(action);
      return this.error(res, failure);
    }
    if (body.ClientId !== undefined && body.ClientId !== CLIENT_ID) {
      return this.error(res, { type: 'ResourceNotFoundException', message: `User pool client ${String(body.ClientId)} does not exist.` });
    }
    const handler = (this as unknown as Record<string, (b: Record<string, unknown>) => unknown>)[`do${action}`];
    if (!handler) return this.error(res, { type: 'UnknownOperationException' });
    try {
      const out = handler.call(this, body);
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
      res.end(JSON.stringify(out));
    } catch (error) {
      this.error(res, error as Failure);
    }
  }

  private error(res: ServerResponse, f: Failure): void {
    res.writeHead(f.status ?? (f.type === 'InternalErrorException' ? 500 : 400), {
      'content-type': 'application/x-amz-json-1.1',
      'x-amzn-errortype': `${f.type}:`,
      ...f.headers,
    });
    res.end(JSON.stringify({ __type: f.type, message: f.message ?? f.type }));
  }

  private userOf(username: unknown): FakeUser {
    const user = this.users.get(String(username));
    if (!user) throw { type: 'UserNotFoundException', message: 'User does not exist.' } satisfies Failure;
    return user;
  }

  private tokensFor(user: FakeUser, withRefresh: boolean) {
    const refresh = randomUUID();
    if (withRefresh) this.refreshTokens.set(refresh, user.username);
    return {
      AuthenticationResult: {
        AccessToken: this.token(user),
        ExpiresIn: 3600,
        TokenType: 'Bearer',
        IdToken: this.token(user, { tokenUse: 'id' }),
        ...(withRefresh ? { RefreshToken: refresh } : {}),
      },
      ChallengeParameters: {},
    };
  }

  protected doInitiateAuth(body: Record<string, unknown>) {
    const params = (body.AuthParameters ?? {}) as Record<string, string>;
    if (body.AuthFlow === 'REFRESH_TOKEN_AUTH') {
      const username = this.refreshTokens.get(params.REFRESH_TOKEN ?? '');
      if (!username) throw { type: 'NotAuthorizedException', message: 'Invalid Refresh Token' } satisfies Failure;
      return this.tokensFor(this.userOf(username), false);
    }
    if (body.AuthFlow !== 'USER_PASSWORD_AUTH') throw { type: 'InvalidParameterException', message: 'Unsupported flow' } satisfies Failure;
    const user = this.users.get(params.USERNAME ?? '');
    if (!user || user.password !== params.PASSWORD) {
      throw { type: 'NotAuthorizedException', message: 'Incorrect username or password.' } satisfies Failure;
    }
    if (user.status === 'UNCONFIRMED') throw { type: 'UserNotConfirmedException', message: 'User is not confirmed.' } satisfies Failure;
    if (user.status === 'FORCE_CHANGE_PASSWORD') {
      return { ChallengeName: 'NEW_PASSWORD_REQUIRED', Session: randomUUID(), ChallengeParameters: { USER_ID_FOR_SRP: user.username } };
    }
    return this.tokensFor(user, true);
  }

  protected doGetUser(body: Record<string, unknown>) {
    const token = String(body.AccessToken ?? '');
    let sub: unknown;
    try {
      sub = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')).sub;
    } catch {
      sub = undefined;
    }
    const user = [...this.users.values()].find((u) => u.sub === sub);
    if (!user) throw { type: 'NotAuthorizedException', message: 'Invalid Access Token' } satisfies Failure;
    return {
      Username: user.username,
      UserAttributes: Object.entries(user.attributes).map(([Name, Value]) => ({ Name, Value })),
    };
  }

  /** Only the filter Uplift sends: `sub = "<sub>"`. */
  protected doListUsers(body: Record<string, unknown>) {
    const sub = /^sub = "([^"]*)"$/.exec(String(body.Filter ?? ''))?.[1];
    const user = [...this.users.values()].find((u) => u.sub === sub);
    return {
      Users: user
        ? [{ Username: user.username, Enabled: user.enabled, UserStatus: user.status, Attributes: Object.entries(user.attributes).map(([Name, Value]) => ({ Name, Value })) }]
        : [],
    };
  }

  protected doAdminListGroupsForUser(body: Record<string, unknown>) {
    const user = this.userOf(body.Username);
    return { Groups: user.groups.map((GroupName) => ({ GroupName, UserPoolId: body.UserPoolId })) };
  }

  protected doSignUp(body: Record<string, unknown>) {
    const username = String(body.Username);
    if (this.users.has(username)) throw { type: 'UsernameExistsException', message: 'User already exists' } satisfies Failure;
    const attributes = Object.fromEntries(((body.UserAttributes ?? []) as Array<{ Name: string; Value: string }>).map((a) => [a.Name, a.Value]));
    const user = this.addUser({ username, password: String(body.Password), attributes, status: 'UNCONFIRMED', code: '123456' });
    return {
      UserConfirmed: false,
      UserSub: user.sub,
      CodeDeliveryDetails: { Destination: 'u***@e***', DeliveryMedium: 'EMAIL', AttributeName: 'email' },
    };
  }

  protected doConfirmSignUp(body: Record<string, unknown>) {
    const user = this.userOf(body.Username);
    if (user.status !== 'UNCONFIRMED') throw { type: 'NotAuthorizedException', message: 'User cannot be confirmed. Current status is CONFIRMED' } satisfies Failure;
    if (body.ConfirmationCode !== user.code) throw { type: 'CodeMismatchException', message: 'Invalid verification code provided, please try again.' } satisfies Failure;
    user.status = 'CONFIRMED';
    user.code = undefined;
    // The code went to the email, so confirming proves it.
    if (user.attributes.email !== undefined) user.attributes.email_verified = 'true';
    return {};
  }

  protected doForgotPassword(body: Record<string, unknown>) {
    const user = this.userOf(body.Username);
    user.code = '654321';
    return { CodeDeliveryDetails: { Destination: 'u***@e***', DeliveryMedium: 'EMAIL', AttributeName: 'email' } };
  }

  protected doConfirmForgotPassword(body: Record<string, unknown>) {
    const user = this.userOf(body.Username);
    if (!user.code || body.ConfirmationCode !== user.code) {
      throw { type: 'CodeMismatchException', message: 'Invalid verification code provided, please try again.' } satisfies Failure;
    }
    user.password = String(body.Password);
    user.code = undefined;
    return {};
  }
}
