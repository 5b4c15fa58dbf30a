import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import { actorOf, apiKey, clientOf, role, signedIn } from '../../platform/auth.js';
import { beta } from '../../platform/openapi.js';
import { errorResponses } from '../../platform/schemas.js';
import { parseContextParam, QUERY_CONTEXT } from '../segments/domain.js';
import {
  BulkToggleBody,
  BulkToggleResult,
  CopyStateBody,
  CopyStateParams,
  EnvironmentQuery,
  EvaluateBody,
  EvaluateParams,
  EvaluateQuery,
  Evaluation,
  FlagCreate,
  FlagList,
  FlagListQuery,
  FlagParams,
  FlagUpdate,
  FlagView,
  HistoryEntry,
  HistoryQuery,
  UserFlags,
  UserFlagsParams,
  UserFlagsQuery,
} from './schemas.js';
import type { FlagsService } from './service.js';

const tags = ['feature-flags'];
const editors = () => role('ADMIN', 'DEVELOPER');
const STATUS_VERBS = [
  ['activate', 'activate', 'Turn the flag on'],
  ['enable', 'activate', 'Turn the flag on (same as activate)'],
  ['deactivate', 'deactivate', 'Turn the flag off'],
  ['disable', 'deactivate', 'Turn the flag off (same as deactivate)'],
  ['toggle', 'toggle', 'Turn the flag on when off, off when on'],
] as const;
const STATUS_DESCRIPTIONS: Record<(typeof STATUS_VERBS)[number][0], string> = {
  activate: 'ADMIN and DEVELOPER. Sets the flag active so it evaluates by its targeting rules and rollout percentage. An archived flag is 400: unarchive it first.',
  enable: 'ADMIN and DEVELOPER. Same as activate. An archived flag is 400: unarchive it first.',
  deactivate: 'ADMIN and DEVELOPER. Sets the flag inactive so it evaluates to false for every user; an archived flag stays archived (200).',
  disable: 'ADMIN and DEVELOPER. Same as deactivate; an archived flag stays archived (200).',
  toggle: 'ADMIN and DEVELOPER. Turns an active flag off and an inactive one on; an archived flag is 400: unarchive it first.',
};

export const featureFlagsRoutes: FastifyPluginAsyncTypebox<{ flags: FlagsService }> = async (app, { flags }) => {
  app.get('/', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'listFeatureFlags', summary: 'List flags, newest first, with the total number of matches',
      description: 'Every signed-in role. Filter by status (ACTIVE, INACTIVE, ARCHIVED) and search in name or key (any case); total counts every match, not just the page.',
      querystring: FlagListQuery,
      response: { 200: FlagList, ...errorResponses(401, 404, 422) },
    },
  }, (req) => flags.list(req.query));

  app.post('/', {
    config: { access: editors() },
    schema: {
      tags, operationId: 'createFeatureFlag', summary: 'Create a flag (off unless is_active is true)',
      description: 'ADMIN and DEVELOPER. Unknown fields and explicit nulls are 422, default_value accepts only false, and targeting rules with more than 1,000 groups and conditions or an unusable segment are 422. A duplicate key is 409.',
      body: FlagCreate, querystring: EnvironmentQuery,
      response: { 201: FlagView, ...errorResponses(401, 403, 404, 409, 422) },
    },
  }, async (req, reply) => reply.code(201).send(await flags.create(actorOf(req), req.body, req.query.environment)));

  app.post('/bulk-toggle', {
    config: { access: editors() },
    schema: {
      tags, operationId: 'bulkToggleFeatureFlags', summary: 'Enable, disable or archive many flags; a result per flag',
      description: 'ADMIN and DEVELOPER. Applies enable, disable or archive to each listed flag independently: the answer has one result per flag with success and error, so an archived flag that cannot be enabled does not stop the others.',
      body: BulkToggleBody, querystring: EnvironmentQuery,
      response: { 200: BulkToggleResult, ...errorResponses(401, 403, 404, 422) },
    },
  }, (req) => flags.bulkToggle(actorOf(req), req.body.ids, req.body.action, req.query.environment));

  app.get('/user/:user_id', {
    config: { access: apiKey() },
    schema: {
      tags, operationId: 'evaluateFeatureFlagsForUser', summary: 'Every flag that is not archived, on or off for this user',
      description: 'Needs an API key. A map of every non-archived flag key to true or false for this user and optional context (URL-encoded JSON, at most 8,192 bytes and 10 levels). With details=true each key maps to {enabled, variation, value} instead: typed flags add the variation served and its value.',
      params: UserFlagsParams, querystring: UserFlagsQuery,
      response: { 200: UserFlags, ...errorResponses(401, 422, 429) },
    },
  }, async (req, reply) => {
    const context = parseContextParam(req.query.context);
    const { environment } = clientOf(req);
    if (req.query.details === true) return flags.userFlagDetails(req.params.user_id, context, environment);
    const json = await flags.userFlagsJson(req.params.user_id, context, environment);
    // Hot path: the answer arrives serialised (the schema above still documents it); a string payload with this
    // content type is sent as it is.
    return reply.type('application/json; charset=utf-8').send(json as unknown as Static<typeof UserFlags>);
  });

  app.get('/evaluate/:flag_key', {
    config: { access: apiKey() },
    schema: {
      tags, operationId: 'evaluateFeatureFlag', summary: 'Evaluate one flag for a user (unknown key: reason not_found)',
      description: 'Needs an API key. Evaluates the flag for user_id with the optional JSON context against its status, targeting rules and rollout percentage; an unknown key answers enabled false with reason not_found rather than 404. Flags are never cached.',
      params: EvaluateParams, querystring: EvaluateQuery,
      response: { 200: Evaluation, ...errorResponses(401, 422, 429) },
    },
  }, (req) => flags.evaluate(req.params.flag_key, req.query.user_id, parseContextParam(req.query.context), QUERY_CONTEXT, clientOf(req).environment));

  app.post('/evaluate/:flag_key', {
    config: { access: apiKey() },
    schema: {
      tags, operationId: 'evaluateFeatureFlagWithBody', summary: 'Evaluate one flag for a user, context in the body',
      description: 'Needs an API key. As the GET route, with user_id and context in the JSON body, for contexts too large for a URL. The context is limited to 10 levels and 8,192 bytes (422).',
      params: EvaluateParams, body: EvaluateBody,
      response: { 200: Evaluation, ...errorResponses(400, 401, 422, 429) },
    },
  }, (req) => flags.evaluate(req.params.flag_key, req.body.user_id, req.body.context, ['body', 'context'], clientOf(req).environment));

  app.get('/:flag_id', {
    config: { access: signedIn() },
    schema: { tags, operationId: 'readFeatureFlag', summary: 'A feature flag', description: 'Every signed-in role. The flag with its status, rollout percentage and targeting rules. Unknown id is 404.', params: FlagParams, querystring: EnvironmentQuery, response: { 200: FlagView, ...errorResponses(401, 404, 422) } },
  }, (req) => flags.getFlag(req.params.flag_id, req.query.environment));

  app.put('/:flag_id', {
    config: { access: editors() },
    schema: {
      tags, operationId: 'updateFeatureFlag', summary: 'Change the fields sent; omitted fields keep their values',
      description: 'ADMIN and DEVELOPER. Only the sent fields change; unknown fields and explicit nulls are 422. Turning an archived flag on is 400 (unarchive it first); a duplicate key is 409.',
      params: FlagParams, body: FlagUpdate, querystring: EnvironmentQuery,
      response: { 200: FlagView, ...errorResponses(400, 401, 403, 404, 409, 422) },
    },
  }, (req) => flags.update(actorOf(req), req.params.flag_id, req.body, req.query.environment));

  app.delete('/:flag_id', {
    config: { access: editors() },
    schema: {
      tags, operationId: 'deleteFeatureFlag', summary: 'Delete a feature flag (its events are kept, detached)', params: FlagParams,
      description: 'ADMIN and DEVELOPER. Removes the flag; tracking events tagged with it are kept with feature_flag_id null. Unknown id is 404.',
      response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses(401, 403, 404, 422) },
    },
  }, async (req, reply) => {
    await flags.delete(actorOf(req), req.params.flag_id);
    return reply.code(204).send(null);
  });

  for (const [verb, method, summary] of STATUS_VERBS) {
    app.post(`/:flag_id/${verb}`, {
      config: { access: editors() },
      schema: {
        tags, operationId: `${verb}FeatureFlag`, summary, params: FlagParams, querystring: EnvironmentQuery,
        description: STATUS_DESCRIPTIONS[verb],
        response: { 200: FlagView, ...errorResponses(400, 401, 403, 404, 422) },
      },
    }, (req) => flags[method](actorOf(req), req.params.flag_id, req.query.environment));
  }

  app.post('/:flag_id/unarchive', {
    config: { access: editors() },
    schema: {
      ...beta, tags, operationId: 'unarchiveFeatureFlag', summary: 'Bring an archived flag back, turned off',
      description: 'ADMIN and DEVELOPER. Moves an archived flag back to inactive without turning it on and writes a feature_flag_update audit entry; a flag that is not archived is returned unchanged.',
      params: FlagParams, querystring: EnvironmentQuery,
      response: { 200: FlagView, ...errorResponses(401, 403, 404, 422) },
    },
  }, (req) => flags.unarchive(actorOf(req), req.params.flag_id, req.query.environment));

  app.post('/:flag_id/environments/:target/copy', {
    config: { access: editors() },
    schema: {
      tags, operationId: 'copyFeatureFlagEnvironment', summary: "Promote one flag's state from one environment to another",
      description: "ADMIN and DEVELOPER. Copies the flag's state in `from` (status, rollout, targeting rules, serving variations) to the target environment in one transaction, with a feature_flag_update audit entry naming both. Unknown flag or target is 404; unknown from is 422.",
      params: CopyStateParams, body: CopyStateBody,
      response: { 200: FlagView, ...errorResponses(401, 403, 404, 422) },
    },
  }, (req) => flags.copyState(actorOf(req), req.params.flag_id, req.params.target, req.body.from));

  app.get('/:flag_id/history', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'readFeatureFlagHistory', summary: 'Audit entries of the flag, newest first (DEVELOPER and VIEWER see only their own)',
      description: "Any signed-in role. The flag's audit entries, newest first: ADMIN and ANALYST see every entry, DEVELOPER and VIEWER only the changes they made.",
      params: FlagParams, querystring: HistoryQuery,
      response: { 200: Type.Array(HistoryEntry), ...errorResponses(401, 404, 422) },
    },
  }, (req) => flags.history(actorOf(req), req.params.flag_id, req.query));
};
