import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { open } from '../../platform/auth.js';
import { errorResponses, MessageBody } from '../../platform/schemas.js';

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
