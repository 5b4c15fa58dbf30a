import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { open } from './auth.js';

const require = createRequire(import.meta.url);

export const OPENAPI_PATH = '/api/v1/openapi.json';
/**
 * The service's version, from its package.json (the one source: /health and the OpenAPI document show it). Found
 * by walking up from this file, which runs from src/ under tsx and from dist/src/ once built.
 */
function packageVersion(): string {
  for (let dir = new URL('.', import.meta.url); ; dir = new URL('..', dir)) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'uplift' && pkg.version) return pkg.version;
    } catch {
      // No package.json here: look in the parent.
    }
    if (dir.pathname === '/') throw new Error('package.json of uplift not found');
  }
}
export const API_VERSION = packageVersion();

/** Spec "Versioning": beta routes carry `x-stability: beta`. Spread into a route's schema. */
export const beta = { 'x-stability': 'beta' } as const;

/**
 * The OpenAPI 3.1 document is generated from the route schemas. Swagger UI (/api/v1/docs) and ReDoc
 * (/api/v1/redoc) are served from local packages: the documentation works without a CDN.
 */
export async function registerOpenApi(app: FastifyInstance, profile: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Uplift API',
        version: API_VERSION,
        description: `Experimentation platform: experiments, feature flags, tracking, results. Deployment profile: ${profile}.`,
      },
      servers: [{ url: '/', description: 'This Uplift deployment' }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        },
      },
    },
  });
  // Swagger UI sets inline styles (so style-src allows them) and would ask validator.swagger.io for a badge (off): the
  // page makes no request to another host and logs no Content-Security-Policy error.
  await app.register(swaggerUi, {
    routePrefix: '/api/v1/docs',
    staticCSP: "default-src 'self'; base-uri 'self'; font-src 'self' data:; frame-ancestors 'self'; img-src 'self' data:; object-src 'none'; script-src 'self'; script-src-attr 'none'; style-src 'self' 'unsafe-inline'; upgrade-insecure-requests;",
    uiConfig: { url: OPENAPI_PATH, validatorUrl: null },
  });

  app.get(OPENAPI_PATH, { config: { access: open() }, schema: { hide: true } }, () => app.swagger());

  // ReDoc's footer loads its logo from cdn.redoc.ly: served from here instead, so the page asks no other host.
  const redocBundle = readFileSync(require.resolve('redoc/bundles/redoc.standalone.js'), 'utf8').replaceAll(REDOC_CDN_LOGO, REDOC_LOGO_PATH);
  app.get(REDOC_LOGO_PATH, { config: { access: open() }, schema: { hide: true } }, (_req, reply) =>
    reply.type('image/svg+xml').header('Cache-Control', 'public, max-age=86400').send(REDOC_LOGO),
  );
  app.get('/api/v1/redoc/redoc.standalone.js', { config: { access: open() }, schema: { hide: true } }, (_req, reply) =>
    reply.type('application/javascript; charset=utf-8').header('Cache-Control', 'public, max-age=86400').send(redocBundle),
  );
  app.get('/api/v1/redoc', { config: { access: open() }, schema: { hide: true } }, (_req, reply) =>
    reply.type('text/html; charset=utf-8').send(REDOC_PAGE),
  );
}

const REDOC_CDN_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
const REDOC_LOGO_PATH = '/api/v1/redoc/logo-mini.svg';
/** A plain mark beside "API docs by Redocly" (the footer's link names them). */
const REDOC_LOGO = '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16"><circle cx="8" cy="8" r="7" fill="#32329f"/></svg>';

const REDOC_PAGE = `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Uplift API - ReDoc</title>
  <style>body { margin: 0; padding: 0; }</style>
</head>
<body>
  <redoc spec-url="${OPENAPI_PATH}"></redoc>
  <script src="/api/v1/redoc/redoc.standalone.js"></script>
</body>
</html>`;
