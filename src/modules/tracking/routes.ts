import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { apiKey } from '../../platform/auth.js';
import { beta } from '../../platform/openapi.js';
import { errorResponses } from '../../platform/schemas.js';
import {
  AssignBody, AssignmentView, BatchAssignBody, BatchAssignView, BatchTrackBody, BatchTrackView, EventByIdsView, EventView,
  PeekQuery, PeekView, TrackBody, TrackByIdsBody, UserAssignmentsView, UserIdParams,
} from './schemas.js';
import type { TrackingService } from './service.js';

const tags = ['tracking'];
const writeErrors = errorResponses(401, 404, 413, 422, 429, 503);

/** Client applications (X-API-Key) write assignments and events here. */
export const trackingRoutes: FastifyPluginAsyncTypebox<{ tracking: TrackingService }> = async (app, { tracking }) => {
  app.post('/assign', {
    config: { access: apiKey() },
    schema: {
      tags, operationId: 'assign', summary: 'Assign a user to a variant of an active experiment (sticky)',
      body: AssignBody, response: { 200: AssignmentView, ...writeErrors },
    },
  }, (req) => tracking.assign(req.body));

  app.post('/assign/batch', {
    config: { access: apiKey({ scope: 'sdk:ruleset', ownerRoles: ['ADMIN', 'DEVELOPER'] }) },
    schema: {
      ...beta, tags, operationId: 'assignBatch',
      summary: 'Assign 1 to 1,000 users at once (key with sdk:ruleset scope, owner ADMIN or DEVELOPER)',
      body: BatchAssignBody, response: { 200: BatchAssignView, ...errorResponses(401, 403, 404, 413, 422, 429) },
    },
  }, (req) => tracking.assignBatch(req.body));

  app.get('/assign/peek', {
    config: { access: apiKey() },
    schema: {
      ...beta, tags, operationId: 'peekAssignment',
      summary: "Read a user's assignment to an experiment without enrolling the user or recording a view",
      querystring: PeekQuery, response: { 200: PeekView, ...errorResponses(401, 404, 422, 429) },
    },
  }, (req) => tracking.peek(req.query));

  app.post('/track', {
    config: { access: apiKey() },
    schema: { tags, operationId: 'track', summary: 'Record one event', body: TrackBody, response: { 200: EventView, ...writeErrors } },
  }, (req) => tracking.track(req.body));

  app.post('/batch', {
    config: { access: apiKey() },
    schema: {
      tags, operationId: 'trackBatch', summary: 'Record up to 1,000 events; invalid ones are listed, valid ones stored',
      body: BatchTrackBody, response: { 200: BatchTrackView, ...errorResponses(401, 413, 422, 429, 503) },
    },
  }, (req) => tracking.trackBatch(req.body));

  app.post('/events', {
    config: { access: apiKey() },
    schema: {
      tags, operationId: 'trackByIds', summary: 'Record one event naming experiment, flag and variant by id',
      body: TrackByIdsBody, response: { 200: EventByIdsView, ...errorResponses(400, 401, 404, 422, 429, 503) },
    },
  }, (req) => tracking.trackByIds(req.body));

  app.get('/assignments/:user_id', {
    config: { access: apiKey() },
    schema: {
      tags, operationId: 'userAssignments', summary: "A user's assignments",
      params: UserIdParams, response: { 200: UserAssignmentsView, ...errorResponses(401, 422, 429) },
    },
  }, (req) => tracking.userAssignments(req.params.user_id));
};
