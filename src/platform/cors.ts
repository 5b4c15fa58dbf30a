import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { open } from './auth.js';
import { NotFound } from './errors.js';

/** Headers a browser client may send: the API key, JSON bodies, revalidation and stream resumption. */
const ALLOWED_HEADERS = 'X-API-Key, Content-Type, If-None-Match, Last-Event-ID, X-Request-ID';
/** Headers a browser client may read: revalidation, backoff and support. */
const EXPOSED_HEADERS = 'ETag, Retry-After, X-Request-ID';
const PREFLIGHT_MAX_AGE_SECONDS = 600;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A client-facing route that authenticates by other means than an API key header (a signed stream URL). */
    clientFacing?: boolean;
  }
}

/**
 * CORS for the client-facing routes only: those a client application calls with an API key (flag user and evaluate,
 * tracking, error reports, SDK), recognised by their `config.access`; every other route (signed-in users, the
 * dashboard's) stays same-origin. `origins` come from CORS_ORIGINS: listed origins are echoed (with Vary: Origin), `*`
 * allows any origin. Credentials are never allowed (no Access-Control-Allow-Credentials): the key travels in a header,
 * never a cookie. A preflight (OPTIONS) for one of these routes is answered 204; for any other path it is 404.
 * Register after the auth plugin: the CORS hook is put before the route's guard so that refusals (401, 429) carry
 * the headers too and the browser lets the page read them.
 */
export const corsPlugin = fp<{ origins: string[] }>(async (app: FastifyInstance, { origins }) => {
  const anyOrigin = origins.includes('*');
  const listed = new Set(origins);
  const routes: Array<{ methods: string[]; pattern: RegExp; bearer: boolean }> = [];

  const allowOrigin = (request: FastifyRequest, reply: FastifyReply): boolean => {
    const origin = request.headers.origin;
    if (!anyOrigin) reply.header('Vary', 'Origin');
    if (typeof origin !== 'string' || !(anyOrigin || listed.has(origin))) return false;
    reply.header('Access-Control-Allow-Origin', anyOrigin ? '*' : origin);
    return true;
  };

  const onClientRoute: onRequestHookHandler = (request, reply, done) => {
    if (allowOrigin(request, reply)) reply.header('Access-Control-Expose-Headers', EXPOSED_HEADERS);
    done();
  };

  app.addHook('onRoute', (route) => {
    const access = route.config?.access;
    if ((access?.kind !== 'apiKey' && route.config?.clientFacing !== true) || route.method === 'HEAD') return;
    const methods = (Array.isArray(route.method) ? route.method : [route.method]).map((m) => m.toUpperCase());
    const source = route.url.split('/').map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/');
    routes.push({ methods, pattern: new RegExp(`^${source}/?$`), bearer: access?.kind === 'apiKey' && access.bearer === true });
    const existing = route.onRequest ? (Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest]) : [];
    route.onRequest = [onClientRoute, ...existing];
  });

  app.options('*', { config: { access: open() }, schema: { hide: true } }, async (request, reply) => {
    const path = request.url.split('?')[0];
    const matching = routes.filter((r) => r.pattern.test(path));
    const methods = [...new Set(matching.flatMap((r) => r.methods))];
    if (methods.length === 0) throw new NotFound();
    if (allowOrigin(request, reply)) {
      reply
        .header('Access-Control-Allow-Methods', [...methods, 'OPTIONS'].join(', '))
        // The key as `Authorization: Bearer` only where a route takes it so (OFREP).
        .header('Access-Control-Allow-Headers', matching.some((r) => r.bearer) ? `${ALLOWED_HEADERS}, Authorization` : ALLOWED_HEADERS)
        .header('Access-Control-Max-Age', String(PREFLIGHT_MAX_AGE_SECONDS));
    }
    return reply.code(204).send();
  });
});
