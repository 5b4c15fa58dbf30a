import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf, role, signedIn } from '../../platform/auth.js';
import { errorResponses } from '../../platform/schemas.js';
import {
  MetricDefinitionCreate,
  MetricDefinitionListQuery,
  MetricDefinitionParams,
  MetricDefinitionUpdate,
  MetricDefinitionView,
} from './schemas.js';
import type { MetricDefinitionsService } from './service.js';

const tags = ['metric-definitions'];
const editors = () => role('ADMIN', 'DEVELOPER', 'ANALYST');

export const metricDefinitionsRoutes: FastifyPluginAsyncTypebox<{ definitions: MetricDefinitionsService }> = async (
  app,
  { definitions },
) => {
  app.post('', {
    config: { access: editors() },
    schema: {
      tags, operationId: 'createMetricDefinition', summary: 'Define a metric once, for any experiment to use',
      description:
        'ADMIN, DEVELOPER and ANALYST. kind proportion needs event_name; mean event_name and aggregate; ratio numerator and denominator ({event_name, aggregate}); quantile event_name, aggregate and quantile (p in (0, 1)). capping (none, absolute value, or a pooled percentile p) applies to mean and ratio metrics. A field another kind uses is 422 at its loc; a taken name is 409. Starts at version 1.',
      body: MetricDefinitionCreate,
      response: { 201: MetricDefinitionView, ...errorResponses(401, 403, 409, 422) },
    },
  }, async (req, reply) => reply.code(201).send(await definitions.create(actorOf(req), req.body)));

  app.get('', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'listMetricDefinitions', summary: 'The metric library, by name',
      description: 'Any signed-in role. Definitions ordered by name, optionally only one kind or those carrying a tag.',
      querystring: MetricDefinitionListQuery,
      response: { 200: Type.Array(MetricDefinitionView), ...errorResponses(401, 422) },
    },
  }, (req) => definitions.list(req.query));

  app.get('/:metric_definition_id', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'readMetricDefinition', summary: 'One metric definition',
      description: 'Any signed-in role. A non-UUID id is 422.',
      params: MetricDefinitionParams,
      response: { 200: MetricDefinitionView, ...errorResponses(401, 404, 422) },
    },
  }, (req) => definitions.get(req.params.metric_definition_id));

  app.put('/:metric_definition_id', {
    config: { access: editors() },
    schema: {
      tags, operationId: 'updateMetricDefinition', summary: 'Edit a metric definition (version + 1)',
      description:
        'ADMIN, DEVELOPER and ANALYST. Fields left out keep their value; a new kind drops the old kind\'s event fields (and capping where the new kind takes none). An edit that changes anything adds one to version; analyses computed afterwards use the new definition. Changing the kind to proportion or quantile while an open rollout schedule has a guardrail on the definition is 409 (code metric_definition_guards_schedule).',
      params: MetricDefinitionParams, body: MetricDefinitionUpdate,
      response: { 200: MetricDefinitionView, ...errorResponses(401, 403, 404, 409, 422) },
    },
  }, (req) => definitions.update(actorOf(req), req.params.metric_definition_id, req.body));

  app.delete('/:metric_definition_id', {
    config: { access: editors() },
    schema: {
      tags, operationId: 'deleteMetricDefinition', summary: 'Delete a metric definition no running experiment or open rollout schedule uses',
      description:
        'ADMIN, DEVELOPER and ANALYST. 409 (code metric_definition_in_use) naming the active and paused experiments that use it and the draft, active and paused rollout schedules with a guardrail on it (rollout_schedules); draft, completed and archived experiments keep their metric as spelled out, without the reference.',
      params: MetricDefinitionParams,
      response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses(401, 403, 404, 409, 422) },
    },
  }, async (req, reply) => {
    await definitions.remove(actorOf(req), req.params.metric_definition_id);
    return reply.code(204).send(null);
  });
};
