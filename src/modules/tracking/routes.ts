import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { apiKey } from '../../platform/auth.js';
import { report, telemetry } from '../../platform/telemetry.js';
import { beta } from '../../platform/openapi.js';
import { errorResponses } from '../../platform/schemas.js';
import {
  AssignBody, AssignmentView, BatchAssignBody, BatchAssignView, BatchTrackBody, BatchTrackView, EventByIdsView, EventView,
  PeekQuery, PeekView, TrackBody, TrackByIdsBody, UserAssignmentsView, UserIdParams,
} from './schemas.js';
import type { TrackingService } from './service.js';

const tags = ['tracking'];
const writeErrors = errorResponses(401, 404, 413, 422, 429, 503);

/** The routes that take events, and how many events a request sent (a batch's list, when its body was read). */
const EVENT_ROUTES = new Set(['/track', '/batch', '/events'].map((path) => `/api/v1/tracking${path}`));
const eventsSent = (body: unknown): number => {
  const events = (body as { events?: unknown } | null | undefined)?.events;
  return Array.isArray(events) ? Math.max(events.length, 1) : 1;
};

/** Client applications (X-API-Key) write assignments and events here, and read a user's assignments back. */
export const trackingRoutes: FastifyPluginAsyncTypebox<{ tracking: TrackingService }> = async (app, { tracking }) => {
  // A refused request's events are all rejected, whatever refused them: the schema (422), an unknown key (404), a
  // variant of another experiment (400), a full write queue (503). The events a batch lists as failed in a 200 are
  // counted by the service.
  app.addHook('onError', async (request) => {
    if (request.routeOptions.url !== undefined && EVENT_ROUTES.has(request.routeOptions.url)) {
      report(telemetry.events, { accepted: 0, rejected: eventsSent(request.body) });
    }
  });
  app.post('/assign', {
    config: { access: apiKey() },
    schema: {
      tags, operationId: 'assign', summary: 'Assign a user to a variant of an active experiment (sticky)',
      description: 'Needs an API key. Assigns the user to a variant of the active experiment with that key (404 otherwise) and records a view event. A new user is checked against the global holdout, mutual exclusion group and targeting rules; an ineligible user gets the control with assigned false and the reason. Assignments are sticky.',
      body: AssignBody, response: { 200: AssignmentView, ...writeErrors },
    },
  }, (req) => tracking.assign(req.body));

  app.post('/assign/batch', {
    config: { access: apiKey({ scope: 'sdk:ruleset', ownerRoles: ['ADMIN', 'DEVELOPER'] }) },
    schema: {
      ...beta, tags, operationId: 'assignBatch',
      summary: 'Assign 1 to 1,000 users at once (key with sdk:ruleset scope, owner ADMIN or DEVELOPER)',
      description: 'Beta. Needs an API key with scope sdk:ruleset whose owner is ADMIN, DEVELOPER or a superuser. Assigns 1 to 1,000 distinct users in order and records assignments only (no view events); any context over the limits refuses the whole request (422).',
      body: BatchAssignBody, response: { 200: BatchAssignView, ...errorResponses(401, 403, 404, 413, 422, 429) },
    },
  }, (req) => tracking.assignBatch(req.body));

  app.get('/assign/peek', {
    config: { access: apiKey() },
    schema: {
      ...beta, tags, operationId: 'peekAssignment',
      summary: "Read a user's assignment to an experiment without enrolling the user or recording a view",
      description: 'Beta. Needs an API key (any scope). Returns the assignment stored for the user in the experiment named by experiment_key, in any experiment status, read from the database; nothing is enrolled, evaluated or recorded, and a user with no assignment answers assigned false with null variant fields. An unknown experiment key is 404.',
      querystring: PeekQuery, response: { 200: PeekView, ...errorResponses(401, 404, 422, 429) },
    },
  }, (req) => tracking.peek(req.query));

  app.post('/track', {
    config: { access: apiKey() },
    schema: { tags, operationId: 'track', summary: 'Record one event', description: 'Needs an API key. Records one event for the user. Without experiment_key and feature_flag_key the event is stored but counts in no results; a key that is not found is 404.', body: TrackBody, response: { 200: EventView, ...writeErrors } },
  }, (req) => tracking.track(req.body));

  app.post('/batch', {
    config: { access: apiKey() },
    schema: {
      tags, operationId: 'trackBatch', summary: 'Record up to 1,000 events; invalid ones are listed, valid ones stored',
      description: 'Needs an API key. Records up to 1,000 events; events naming an unknown experiment or flag key are listed in errors and the others are stored.',
      body: BatchTrackBody, response: { 200: BatchTrackView, ...errorResponses(401, 413, 422, 429, 503) },
    },
  }, (req) => tracking.trackBatch(req.body));

  app.post('/events', {
    config: { access: apiKey() },
    schema: {
      tags, operationId: 'trackByIds', summary: 'Record one event naming experiment, flag and variant by id',
      description: 'Needs an API key. Records one event naming the experiment, flag and variant by UUID; an id that names nothing stored is 404 with one sentence per field, never the id.',
      body: TrackByIdsBody, response: { 200: EventByIdsView, ...errorResponses(400, 401, 404, 422, 429, 503) },
    },
  }, (req) => tracking.trackByIds(req.body));

  app.get('/assignments/:user_id', {
    config: { access: apiKey() },
    schema: {
      tags, operationId: 'userAssignments', summary: "A user's assignments",
      description: 'Needs an API key. Every assignment of the user with experiment_name and variant_name.',
      params: UserIdParams, response: { 200: UserAssignmentsView, ...errorResponses(401, 422, 429) },
    },
  }, (req) => tracking.userAssignments(req.params.user_id));
};
