import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { open } from '../../platform/auth.js';
import { errorResponses, MessageBody, StringEnum } from '../../platform/schemas.js';

export const HealthView = Type.Object({
  status: Type.Literal('ok'),
  version: Type.String(),
  profile: Type.String(),
  database: Type.String(),
});

/** GET /health for load balancers: answers without touching the database, so it stays cheap under load. */
export const healthRoutes: FastifyPluginAsyncTypebox<{ version: string; profile: string; database: string }> = async (app, opts) => {
  app.get('/health', {
    config: { access: open() },
    schema: { tags: ['meta'], operationId: 'health', summary: 'Liveness: answers while the process runs (no database check)', description: 'Open liveness probe for load balancers: answers 200 while the process runs, without checking the database or Redis.', response: { 200: HealthView, ...errorResponses(429) } },
  }, () => ({ status: 'ok' as const, version: opts.version, profile: opts.profile, database: opts.database }));
};

export const ReadyView = Type.Object({
  status: StringEnum(['ready', 'unavailable']),
  checks: Type.Record(Type.String(), StringEnum(['ok', 'error']), { description: 'database, and redis when configured' }),
});

/** A dependency check; it fails by throwing or by not answering within READY_TIMEOUT_MS. */
export type ReadinessProbe = () => Promise<unknown>;
const READY_TIMEOUT_MS = 2_000;

async function probe(check: ReadinessProbe): Promise<'ok' | 'error'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timeout')), READY_TIMEOUT_MS);
  });
  try {
    await Promise.race([check(), timeout]);
    return 'ok';
  } catch {
    return 'error';
  } finally {
    clearTimeout(timer);
  }
}

/**
 * GET /ready for orchestrators: 200 only when every dependency answers (the database, and Redis when configured),
 * else 503, so traffic moves away from a process that cannot serve. /health stays the liveness check.
 */
export const readyRoutes: FastifyPluginAsyncTypebox<{ probes: Record<string, ReadinessProbe> }> = async (app, { probes }) => {
  app.get('/ready', {
    config: { access: open() },
    schema: { tags: ['meta'], operationId: 'ready', summary: 'Readiness: 200 only when the database (and Redis when configured) answers', description: 'Open readiness probe for orchestrators, no sign-in needed. Checks every dependency (the database, and Redis when configured), each within 2 seconds, and answers 200 with status ready when all answer, else 503 with status unavailable and each check marked ok or error, so traffic moves away from a process that cannot serve. Rate limited like every route (429); /health stays the liveness check.', response: { 200: ReadyView, 503: ReadyView, ...errorResponses(429) } },
  }, async (_req, reply) => {
    const names = Object.keys(probes);
    const results = await Promise.all(names.map((name) => probe(probes[name])));
    const checks = Object.fromEntries(names.map((name, i) => [name, results[i]]));
    const ready = results.every((r) => r === 'ok');
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'unavailable', checks });
  });
};

/** The /api/v1/events and /api/v1/assignments routers expose only an informational GET /. */
export const informationalRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/api/v1/events/', {
    config: { access: open() },
    schema: { tags: ['meta'], operationId: 'eventsInfo', summary: 'Where tracking events are written', description: 'Open informational route: events are written through the /api/v1/tracking routes with an API key.', response: { 200: MessageBody, ...errorResponses(429) } },
  }, () => ({ message: 'Tracking events are written through POST /api/v1/tracking/track and /api/v1/tracking/batch.' }));
  app.get('/api/v1/assignments/', {
    config: { access: open() },
    schema: { tags: ['meta'], operationId: 'assignmentsInfo', summary: 'Where assignments are made and read', description: 'Open informational route: assignments are made and read through the /api/v1/tracking routes with an API key.', response: { 200: MessageBody, ...errorResponses(429) } },
  }, () => ({ message: 'Assignments are made through POST /api/v1/tracking/assign and read through GET /api/v1/tracking/assignments/{user_id}.' }));
};
