import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { open } from './auth.js';

/**
 * The web dashboard (web/, built by Vite) served by the API process at `/`, same origin as `/api/v1`. Files are read
 * once at boot: Vite's hashed `assets/` are immutable for a year, index.html is revalidated every time so a deploy is
 * picked up at once. Client routes (`/experiments/…`) get index.html; `/api/*`, `/health` and missing assets never do.
 */
interface StaticFile {
  body: Buffer;
  type: string;
  etag: string;
  cacheControl: string;
}

export interface Dashboard {
  files: Map<string, StaticFile>;
  index: StaticFile;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
  '.map': 'application/json; charset=utf-8',
};
const IMMUTABLE = 'public, max-age=31536000, immutable';
const REVALIDATE = 'no-cache';
// Everything comes from this origin: the dashboard loads nothing from outside (charts draw inline SVG styles).
const CSP = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'";

function typeOf(path: string): string {
  const dot = path.lastIndexOf('.');
  return TYPES[dot >= 0 ? path.slice(dot) : ''] ?? 'application/octet-stream';
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    return statSync(full).isDirectory() ? walk(full) : [full];
  });
}

/** The built dashboard in `dir`, or undefined when it has not been built (the API then runs alone). */
export function loadDashboard(dir: string): Dashboard | undefined {
  const root = resolve(dir);
  if (!existsSync(join(root, 'index.html'))) return undefined;
  const files = new Map<string, StaticFile>();
  for (const full of walk(root)) {
    const urlPath = `/${relative(root, full).split(sep).join('/')}`;
    const body = readFileSync(full);
    files.set(urlPath, {
      body,
      type: typeOf(urlPath),
      etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
      cacheControl: urlPath.startsWith('/assets/') ? IMMUTABLE : REVALIDATE,
    });
  }
  const index = files.get('/index.html') as StaticFile;
  return { files, index };
}

function send(request: FastifyRequest, reply: FastifyReply, file: StaticFile): FastifyReply {
  reply.header('Cache-Control', file.cacheControl).header('ETag', file.etag).header('X-Content-Type-Options', 'nosniff');
  if (file.type.startsWith('text/html')) reply.header('Content-Security-Policy', CSP);
  if (request.headers['if-none-match'] === file.etag) return reply.code(304).send();
  return reply.type(file.type).send(file.body);
}

/** Serves the files; registered at the root, beside the API routes. */
export async function registerDashboard(app: FastifyInstance, dashboard: Dashboard): Promise<void> {
  const route = { config: { access: open() }, schema: { hide: true } } as const;
  app.get('/', route, (request, reply) => send(request, reply, dashboard.index));
  for (const [path, file] of dashboard.files) {
    if (path === '/index.html') continue;
    app.get(path, route, (request, reply) => send(request, reply, file));
  }
}

/**
 * SPA fallback for the not-found handler: a browser navigation (GET/HEAD asking for HTML) to a path that is not the
 * API, the health check or a file gets index.html so the client router can draw the page.
 */
export function dashboardFallback(dashboard: Dashboard | undefined) {
  return (request: FastifyRequest, reply: FastifyReply): boolean => {
    if (!dashboard || (request.method !== 'GET' && request.method !== 'HEAD')) return false;
    const path = request.url.split('?')[0];
    if (path === '/api' || path.startsWith('/api/') || path === '/health' || path.startsWith('/health/') || path.startsWith('/assets/')) return false;
    if (/\.[A-Za-z0-9]+$/.test(path)) return false;
    if (!(request.headers.accept ?? '').includes('text/html')) return false;
    send(request, reply, dashboard.index);
    return true;
  };
}
