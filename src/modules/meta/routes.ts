import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { open } from '../../platform/auth.js';
import { MessageBody } from '../../platform/schemas.js';

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
    schema: { tags: ['meta'], operationId: 'health', response: { 200: HealthView } },
  }, () => ({ status: 'ok' as const, version: opts.version, profile: opts.profile, database: opts.database }));
};

/** The /api/v1/events and /api/v1/assignments routers expose only an informational GET /. */
export const informationalRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/api/v1/events/', {
    config: { access: open() },
    schema: { tags: ['meta'], operationId: 'eventsInfo', response: { 200: MessageBody } },
  }, () => ({ message: 'Tracking events are written through POST /api/v1/tracking/track and /api/v1/tracking/batch.' }));
  app.get('/api/v1/assignments/', {
    config: { access: open() },
    schema: { tags: ['meta'], operationId: 'assignmentsInfo', response: { 200: MessageBody } },
  }, () => ({ message: 'Assignments are made through POST /api/v1/tracking/assign and read through GET /api/v1/tracking/assignments/{user_id}.' }));
};
