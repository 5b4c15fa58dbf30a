import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Redis } from 'ioredis';
import { TooManyRequests } from './errors.js';

/**
 * Per-client-address limits from the spec's table, counted per path (a path with an id counts per id) in one-minute
 * windows. Match order: exact path, then the shared export and AI-interpretation prefixes, then SDK prefixes, then
 * the default. Counters live in Redis when configured (shared by every process), else in memory.
 */
export interface RateRule {
  /** Counter name: the path itself, or a shared name for a prefix that counts as one. */
  bucket: string;
  limit: number;
  /** A fixed Retry-After (export promises 60); otherwise the seconds left in the window. */
  retryAfterSeconds?: number;
}

export interface RateLimitOptions {
  sdkPerMinute: number;
  fullProfile: boolean;
}

const WINDOW_MS = 60_000;
const DEFAULT_LIMIT = 300;

const EXACT: Record<string, number> = {
  '/api/v1/auth/token': 10,
  '/api/v1/auth/login': 10,
  '/api/v1/auth/signup': 5,
  '/api/v1/auth/forgot-password': 5,
  '/api/v1/auth/reset-password': 5,
  '/api/v1/users/me/password': 5,
  '/api/v1/audit-logs/export': 10,
  '/api/v1/ai/design': 10,
  '/api/v1/tracking/assign/batch': 60,
};
const FULL_ONLY_EXACT: Record<string, number> = {
  '/api/v1/auth/sso/exchange': 10,
  '/api/v1/auth/sso/login': 30,
};
const SHARED_PREFIXES: Array<{ prefix: string; limit: number; retryAfterSeconds?: number }> = [
  { prefix: '/api/v1/export/', limit: 10, retryAfterSeconds: 60 },
  { prefix: '/api/v1/ai/interpret/', limit: 10 },
];
const SDK_PREFIXES = ['/api/v1/tracking/', '/api/v1/feature-flags/evaluate/', '/api/v1/feature-flags/user/', '/api/v1/sdk/', '/ofrep/v1/'];

export function ruleFor(path: string, options: RateLimitOptions): RateRule {
  const exact = EXACT[path] ?? (options.fullProfile ? FULL_ONLY_EXACT[path] : undefined);
  if (exact !== undefined) return { bucket: path, limit: exact };
  for (const shared of SHARED_PREFIXES) {
    if (path.startsWith(shared.prefix)) return { bucket: shared.prefix, limit: shared.limit, retryAfterSeconds: shared.retryAfterSeconds };
  }
  if (SDK_PREFIXES.some((prefix) => path.startsWith(prefix))) return { bucket: path, limit: options.sdkPerMinute };
  return { bucket: path, limit: DEFAULT_LIMIT };
}

export interface CounterStore {
  /** Counts one hit; returns the count in the current window and the milliseconds until it resets. */
  hit(key: string, windowMs: number): Promise<{ count: number; resetInMs: number }>;
}

export function memoryCounterStore(now: () => number = Date.now): CounterStore {
  const windows = new Map<string, { count: number; resetAt: number }>();
  let lastSweep = now();
  return {
    async hit(key, windowMs) {
      const t = now();
      if (t - lastSweep > windowMs) {
        for (const [k, w] of windows) if (w.resetAt <= t) windows.delete(k);
        lastSweep = t;
      }
      let w = windows.get(key);
      if (!w || w.resetAt <= t) {
        w = { count: 0, resetAt: t + windowMs };
        windows.set(key, w);
      }
      w.count++;
      return { count: w.count, resetInMs: w.resetAt - t };
    },
  };
}

const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
return {count, ttl}`;

export function redisCounterStore(redis: Redis, fallback: CounterStore = memoryCounterStore()): CounterStore {
  return {
    async hit(key, windowMs) {
      try {
        const [count, ttl] = (await redis.eval(HIT_SCRIPT, 1, `rl:${key}`, windowMs)) as [number, number];
        return { count, resetInMs: ttl > 0 ? ttl : windowMs };
      } catch {
        // Redis unreachable: keep limiting with this process's own counts rather than failing requests.
        return fallback.hit(key, windowMs);
      }
    },
  };
}

/**
 * The path a request is counted under, built from the route the router matched (its template with the decoded
 * parameter values put back), never from the raw text: `/auth/%6Cogin` is `/auth/login` to the router, so it must be
 * to the limiter too. A request that matched no route is counted under its decoded path.
 */
export function canonicalPath(request: FastifyRequest): string {
  const template = request.routeOptions.url;
  if (template === undefined) return decodePath(request.url.split('?', 1)[0]);
  const params = (request.params ?? {}) as Record<string, string | undefined>;
  return template
    .split('/')
    .map((part) => (part === '*' ? (params['*'] ?? '') : part.startsWith(':') ? (params[part.slice(1)] ?? part) : part))
    .join('/');
}

function decodePath(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

export const rateLimitPlugin = fp<RateLimitOptions & { store: CounterStore }>(async (app: FastifyInstance, options) => {
  app.addHook('onRequest', async (request, reply) => {
    const rule = ruleFor(canonicalPath(request), options);
    const { count, resetInMs } = await options.store.hit(`${request.ip}|${rule.bucket}`, WINDOW_MS);
    if (count > rule.limit) {
      throw new TooManyRequests(rule.retryAfterSeconds ?? Math.ceil(resetInMs / 1000));
    }
    reply.header('X-RateLimit-Limit', rule.limit);
    reply.header('X-RateLimit-Remaining', Math.max(0, rule.limit - count));
  });
});
