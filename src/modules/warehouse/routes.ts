import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Role } from '../../db/schema/users.js';
import { actorOf, signedIn } from '../../platform/auth.js';
import { beta } from '../../platform/openapi.js';
import { errorResponses } from '../../platform/schemas.js';
import { requireRole } from './errors.js';
import {
  ConnectionCreate,
  ConnectionParams,
  ConnectionTestBody,
  ConnectionTestResult,
  ConnectionUpdate,
  ConnectionView,
  ConnectorView,
  ExperimentParams,
  GeneratedKey,
  PreviewBody,
  RunCreate,
  RunListQuery,
  RunParams,
  RunView,
  SourceCreate,
  SourceParams,
  SourceUpdate,
  SourceView,
  ValidationResult,
} from './schemas.js';
import type { WarehouseService } from './service.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Warehouse routes name their roles here: a refusal is 403 role_required naming them (spec "Authentication"). */
    warehouseRoles?: readonly Role[];
  }
}

const tags = ['warehouse'];
const ANY: readonly Role[] = ['ADMIN', 'DEVELOPER', 'ANALYST', 'VIEWER'];
const READERS: readonly Role[] = ['ADMIN', 'DEVELOPER', 'ANALYST'];
const EDITORS: readonly Role[] = ['ADMIN', 'DEVELOPER'];
const ADMIN: readonly Role[] = ['ADMIN'];

const access = (roles: readonly Role[]) => ({ access: signedIn(), warehouseRoles: roles });

/**
 * Warehouse analysis (beta). Sign-in is the platform guard's; the role check runs in preParsing (after every
 * onRequest hook, so after the guard, and before the body is validated) so a caller without the role gets 403
 * role_required whatever they sent. Source routes open to analysts check the source's kind in the service.
 */
export const warehouseRoutes: FastifyPluginAsyncTypebox<{ warehouse: WarehouseService }> = async (app, { warehouse }) => {
  app.addHook('preParsing', async (req) => {
    const roles = req.routeOptions.config.warehouseRoles;
    if (roles) requireRole(actorOf(req), roles);
  });

  app.get('/connectors', {
    config: access(ANY),
    schema: {
      tags, ...beta, operationId: 'listWarehouseConnectors', summary: 'Warehouse types, and whether their driver loads here',
      response: { 200: Type.Array(ConnectorView), ...errorResponses(401, 403) },
    },
  }, () => warehouse.connectors());

  app.get('/connections', {
    config: access(READERS),
    schema: { tags, ...beta, operationId: 'listWarehouseConnections', response: { 200: Type.Array(ConnectionView), ...errorResponses(401, 403, 503) } },
  }, () => warehouse.listConnections());

  app.post('/connections', {
    config: access(ADMIN),
    schema: {
      tags, ...beta, operationId: 'createWarehouseConnection', body: ConnectionCreate,
      response: { 201: ConnectionView, ...errorResponses(401, 403, 422, 503) },
    },
  }, async (req, reply) => reply.code(201).send(await warehouse.createConnection(actorOf(req), req.body)));

  app.post('/connections/test', {
    config: access(ADMIN),
    schema: {
      tags, ...beta, operationId: 'testUnsavedWarehouseConnection', summary: 'Sign in with unsaved settings and run a statement that reads no table; nothing is stored',
      body: ConnectionTestBody, response: { 200: ConnectionTestResult, ...errorResponses(401, 403, 422, 429, 503) },
    },
  }, (req) => warehouse.testUnsaved(req.body));

  app.get('/connections/:connection_id', {
    config: access(READERS),
    schema: { tags, ...beta, operationId: 'readWarehouseConnection', params: ConnectionParams, response: { 200: ConnectionView, ...errorResponses(401, 403, 404, 422, 503) } },
  }, (req) => warehouse.getConnection(req.params.connection_id));

  app.put('/connections/:connection_id', {
    config: access(ADMIN),
    schema: {
      tags, ...beta, operationId: 'updateWarehouseConnection', params: ConnectionParams, body: ConnectionUpdate,
      response: { 200: ConnectionView, ...errorResponses(401, 403, 404, 422, 503) },
    },
  }, (req) => warehouse.updateConnection(actorOf(req), req.params.connection_id, req.body));

  app.delete('/connections/:connection_id', {
    config: access(ADMIN),
    schema: {
      tags, ...beta, operationId: 'deleteWarehouseConnection', params: ConnectionParams,
      response: { 204: Type.Null({ description: 'Deleted with its credentials' }), ...errorResponses(401, 403, 404, 409, 422) },
    },
  }, async (req, reply) => {
    await warehouse.deleteConnection(actorOf(req), req.params.connection_id);
    return reply.code(204).send(null);
  });

  app.post('/connections/:connection_id/test', {
    config: access(ADMIN),
    schema: {
      tags, ...beta, operationId: 'testWarehouseConnection', params: ConnectionParams,
      response: { 200: ConnectionTestResult, ...errorResponses(401, 403, 404, 409, 422, 429, 503) },
    },
  }, (req) => warehouse.testSaved(req.params.connection_id));

  app.post('/connections/:connection_id/regenerate-key', {
    config: access(ADMIN),
    schema: {
      tags, ...beta, operationId: 'regenerateWarehouseConnectionKey', summary: 'A new RSA key pair; the public key is returned once',
      params: ConnectionParams, response: { 200: GeneratedKey, ...errorResponses(401, 403, 404, 409, 422, 503) },
    },
  }, (req) => warehouse.regenerateKey(actorOf(req), req.params.connection_id));

  app.get('/sources', {
    config: access(READERS),
    schema: { tags, ...beta, operationId: 'listWarehouseSources', response: { 200: Type.Array(SourceView), ...errorResponses(401, 403) } },
  }, () => warehouse.listSources());

  app.post('/sources', {
    config: access(READERS),
    schema: { tags, ...beta, operationId: 'createWarehouseSource', body: SourceCreate, response: { 201: SourceView, ...errorResponses(401, 403, 422) } },
  }, async (req, reply) => reply.code(201).send(await warehouse.createSource(actorOf(req), req.body)));

  app.get('/sources/:source_id', {
    config: access(READERS),
    schema: { tags, ...beta, operationId: 'readWarehouseSource', params: SourceParams, response: { 200: SourceView, ...errorResponses(401, 403, 404, 422) } },
  }, (req) => warehouse.getSource(req.params.source_id));

  app.put('/sources/:source_id', {
    config: access(READERS),
    schema: {
      tags, ...beta, operationId: 'updateWarehouseSource', summary: 'Change a source; clears its validation',
      params: SourceParams, body: SourceUpdate, response: { 200: SourceView, ...errorResponses(401, 403, 404, 422) },
    },
  }, (req) => warehouse.updateSource(actorOf(req), req.params.source_id, req.body));

  app.delete('/sources/:source_id', {
    config: access(EDITORS),
    schema: {
      tags, ...beta, operationId: 'deleteWarehouseSource', params: SourceParams,
      response: { 204: Type.Null({ description: 'Deleted; runs keep their own copy of the definition' }), ...errorResponses(401, 403, 404, 422) },
    },
  }, async (req, reply) => {
    await warehouse.deleteSource(actorOf(req), req.params.source_id);
    return reply.code(204).send(null);
  });

  app.post('/sources/:source_id/validate', {
    config: access(READERS),
    schema: {
      tags, ...beta, operationId: 'validateWarehouseSource', summary: 'Check table and columns against metadata; reads no data',
      params: SourceParams, response: { 200: ValidationResult, ...errorResponses(401, 403, 404, 409, 422, 429, 503) },
    },
  }, (req) => warehouse.validateSource(actorOf(req), req.params.source_id));

  app.post('/sources/:source_id/preview', {
    config: access(READERS),
    schema: {
      tags, ...beta, operationId: 'previewWarehouseSource', summary: 'Queue a preview run (last 7 days by default); read its counts at GET /runs/{run_id}',
      params: SourceParams, body: Type.Optional(PreviewBody), response: { 202: RunView, ...errorResponses(401, 403, 404, 409, 422, 429, 503) },
    },
  }, async (req, reply) => reply.code(202).send(await warehouse.preview(actorOf(req), req.params.source_id, req.body ?? {})));

  app.post('/experiments/:experiment_id/runs', {
    config: access(EDITORS),
    schema: {
      tags, ...beta, operationId: 'startWarehouseAnalysis', summary: 'Queue an analysis; 202 with the run',
      params: ExperimentParams, body: RunCreate, response: { 202: RunView, ...errorResponses(401, 403, 404, 409, 422, 429, 503) },
    },
  }, async (req, reply) => reply.code(202).send(await warehouse.startAnalysis(actorOf(req), req.params.experiment_id, req.body)));

  app.get('/experiments/:experiment_id/runs', {
    config: access(READERS),
    schema: {
      tags, ...beta, operationId: 'listWarehouseAnalyses', summary: "The experiment's analyses, newest first",
      params: ExperimentParams, querystring: RunListQuery, response: { 200: Type.Array(RunView), ...errorResponses(401, 403, 404, 422) },
    },
  }, (req) => warehouse.listRuns(req.params.experiment_id, req.query.skip, req.query.limit));

  app.get('/runs/:run_id', {
    config: access(READERS),
    schema: {
      tags, ...beta, operationId: 'readWarehouseRun', summary: 'One analysis or preview: status, results and the SQL sent',
      params: RunParams, response: { 200: RunView, ...errorResponses(401, 403, 404, 422) },
    },
  }, (req) => warehouse.getRun(req.params.run_id));
};
