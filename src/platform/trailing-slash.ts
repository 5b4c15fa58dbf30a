import type { FastifyInstance } from 'fastify';

/**
 * Like FastAPI's redirect_slashes: a request for `/x/` when only `/x` exists (or the reverse) is answered 307 with
 * the other spelling, keeping the query string. Routes are collected as they are registered.
 */
export function trailingSlashRedirects(app: FastifyInstance): (method: string, url: string) => string | undefined {
  const routes: Array<{ methods: Set<string>; pattern: RegExp }> = [];
  app.addHook('onRoute', (route) => {
    const methods = new Set((Array.isArray(route.method) ? route.method : [route.method]).map((m) => m.toUpperCase()));
    const source = route.url
      .split('/')
      .map((part) => (part.startsWith(':') ? '[^/]+' : part === '*' ? '.*' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    routes.push({ methods, pattern: new RegExp(`^${source}$`) });
  });
  return (method, url) => {
    const [path, query] = splitOnce(url, '?');
    if (path === '/' ) return undefined;
    const other = path.endsWith('/') ? path.slice(0, -1) : `${path}/`;
    const upper = method.toUpperCase();
    const exists = routes.some((r) => r.methods.has(upper) && r.pattern.test(other));
    return exists ? other + (query === undefined ? '' : `?${query}`) : undefined;
  };
}

function splitOnce(text: string, sep: string): [string, string | undefined] {
  const i = text.indexOf(sep);
  return i < 0 ? [text, undefined] : [text.slice(0, i), text.slice(i + 1)];
}
