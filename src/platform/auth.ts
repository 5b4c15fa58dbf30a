import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import type { Role } from './roles.js';
import { Forbidden, NOT_ENOUGH_PERMISSIONS, Unauthorized } from './errors.js';

export const API_SCOPES = ['sdk:ruleset'] as const;
export type ApiScope = (typeof API_SCOPES)[number];

/** A signed-in user (bearer token). */
export interface Actor {
  kind: 'user';
  id: string;
  username: string;
  email: string | null;
  fullName: string | null;
  role: Role | null;
  isSuperuser: boolean;
  isActive: boolean;
}

/** A client application (X-API-Key) and what its owning account may do. */
export interface KeyClient {
  kind: 'apiKey';
  keyId: string;
  userId: string;
  scopes: string[];
  ownerRole: Role | null;
  ownerIsSuperuser: boolean;
  /** Past this instant the key is refused everywhere (open streams close); null never expires. */
  expiresAt: Date | null;
  /** The environment the key belongs to: every evaluation with it answers there. */
  environment: string;
}

/**
 * Who may call a route, declared once in the route's `config.access`. The onRoute hook below turns it into the
 * guard and the OpenAPI `security`, and refuses to boot a route that declares nothing.
 */
export type Access =
  | { kind: 'open' }
  | { kind: 'user'; roles?: readonly Role[]; superuser?: boolean }
  | { kind: 'apiKey'; scope?: ApiScope; ownerRoles?: readonly Role[]; bearer?: boolean };

export const open = (): Access => ({ kind: 'open' });
export const signedIn = (): Access => ({ kind: 'user' });
/** Any of these roles; a superuser passes every check. */
export const role = (...roles: Role[]): Access => ({ kind: 'user', roles });
export const superuserOnly = (): Access => ({ kind: 'user', superuser: true });
export type KeyAccess = Extract<Access, { kind: 'apiKey' }>;
/** `bearer`: the key may also come as `Authorization: Bearer <key>` (OFREP clients send it either way). */
export const apiKey = (opts: { scope?: ApiScope; ownerRoles?: Role[]; bearer?: boolean } = {}): KeyAccess => ({ kind: 'apiKey', ...opts });

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: Access;
  }
  interface FastifyRequest {
    actor?: Actor;
    client?: KeyClient;
  }
}

export interface Authenticator {
  /** The account behind a bearer token; throws Unauthorized when the sign-in is refused. */
  verifyBearer(token: string): Promise<Actor>;
  resolveApiKey(rawKey: string): Promise<KeyClient | undefined>;
}

export const INVALID_API_KEY = 'Invalid or missing API key';

/** The signed-in caller of a route declared with a user access. */
export function actorOf(request: FastifyRequest): Actor {
  if (!request.actor) throw new Unauthorized();
  return request.actor;
}

export function clientOf(request: FastifyRequest): KeyClient {
  if (!request.client) throw new Unauthorized(INVALID_API_KEY);
  return request.client;
}

export function hasRole(actor: Pick<Actor, 'role' | 'isSuperuser'>, ...roles: Role[]): boolean {
  return actor.isSuperuser || (actor.role !== null && roles.includes(actor.role));
}

export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (!header) return undefined;
  const [scheme, token] = header.split(' ', 2);
  return scheme?.toLowerCase() === 'bearer' && token ? token.trim() : undefined;
}

/**
 * Why a resolved key may not call a route declared `apiKey(...)`: the scope or the owner's role it lacks. Long-lived
 * connections ask again when the key or its owner changes, so they stay open only while a new request would pass.
 */
export function keyRefusal(access: KeyAccess, client: KeyClient): Forbidden | undefined {
  if (access.scope && !client.scopes.includes(access.scope)) {
    return new Forbidden(`This API key lacks the ${access.scope} scope`);
  }
  if (access.ownerRoles && !hasRole({ role: client.ownerRole, isSuperuser: client.ownerIsSuperuser }, ...access.ownerRoles)) {
    return new Forbidden("This API key's owner lacks the role this operation needs");
  }
  return undefined;
}

function guard(access: Access, authenticator: Authenticator): onRequestHookHandler | undefined {
  switch (access.kind) {
    case 'open':
      return undefined;
    case 'user':
      return async (request) => {
        const token = bearerToken(request);
        if (!token) throw new Unauthorized();
        const actor = await authenticator.verifyBearer(token);
        request.actor = actor;
        if (access.superuser && !actor.isSuperuser) throw new Forbidden(NOT_ENOUGH_PERMISSIONS);
        if (access.roles && !hasRole(actor, ...access.roles)) throw new Forbidden(NOT_ENOUGH_PERMISSIONS);
      };
    case 'apiKey':
      return async (request) => {
        const raw = request.headers['x-api-key'] ?? (access.bearer ? bearerToken(request) : undefined);
        const client = typeof raw === 'string' && raw ? await authenticator.resolveApiKey(raw) : undefined;
        if (!client) throw new Unauthorized(INVALID_API_KEY);
        request.client = client;
        const refusal = keyRefusal(access, client);
        if (refusal) throw refusal;
      };
  }
}

const SECURITY: Record<Access['kind'], Array<Record<string, string[]>>> = {
  // Declared empty, not left out: the document says these routes need no credentials.
  open: [],
  user: [{ bearer: [] }],
  apiKey: [{ apiKey: [] }],
};

/** Routes that third-party plugins register (documentation UI) and need no declaration. */
const UNDECLARED_OK = [/^\/api\/v1\/docs(\/|$)/];

export const authPlugin = fp<{ authenticator: Authenticator }>(async (app: FastifyInstance, { authenticator }) => {
  app.decorateRequest('actor', undefined);
  app.decorateRequest('client', undefined);
  app.addHook('onRoute', (route) => {
    const access = route.config?.access;
    if (!access) {
      if (UNDECLARED_OK.some((re) => re.test(route.url)) || route.method === 'HEAD') return;
      throw new Error(`Route ${route.method} ${route.url} declares no config.access`);
    }
    const handler = guard(access, authenticator);
    if (handler) {
      const existing = route.onRequest ? (Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest]) : [];
      route.onRequest = [handler, ...existing];
    }
    const security = access.kind === 'apiKey' && access.bearer ? [...SECURITY.apiKey, { bearer: [] }] : SECURITY[access.kind];
    if (route.schema) route.schema = { ...route.schema, security } as typeof route.schema;
  });
});
