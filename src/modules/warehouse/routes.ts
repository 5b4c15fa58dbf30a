import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Role } from '../../platform/roles.js';
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
      tags, ...beta, operationId: 'listWarehouseConnectors', description: 'Beta; any signed-in role (ADMIN, DEVELOPER, ANALYST, VIEWER). Lists every warehouse type with whether its driver loads in this deployment, whether it bills by bytes and whether the platform can generate its key pair. Creating or testing a connection of a type whose driver is not available is 422 connector_disabled.', summary: 'Warehouse types, and whether their driver loads here',
      response: { 200: Type.Array(ConnectorView), ...errorResponses(401, 403) },
    },
  }, () => warehouse.connectors());

  app.get('/connections', {
    config: access(READERS),
    schema: { tags, ...beta, operationId: 'listWarehouseConnections', summary: 'List warehouse connections (never their credentials)', description: 'Beta; ADMIN, DEVELOPER or ANALYST (any other role is 403 role_required). Lists the connections with their settings, per-connection limits and status; credentials are never returned, settings that are or look like secrets (a name such as password, token or key; a value such as a URL with user:password@, a PEM key or a token) are shown to ADMIN only, and status is needs_new_credentials when the configured keys cannot open them. 503 credentials_unavailable when no credential key is configured (WAREHOUSE_CREDENTIALS_KEYS).', response: { 200: Type.Array(ConnectionView), ...errorResponses(401, 403, 503) } },
  }, (req) => warehouse.listConnections(actorOf(req)));

  app.post('/connections', {
    config: access(ADMIN),
    schema: {
      tags, ...beta, operationId: 'createWarehouseConnection', summary: 'Create a warehouse connection; credentials are stored encrypted', description: "Beta; ADMIN only. Creates a connection after checking its settings and credentials against the warehouse type's fields; credentials are stored encrypted and never returned, and the creation is audited without them. query_timeout_seconds defaults to 300 and max_runs_per_day to 20, each capped by the deployment settings, and an optional daily worst-case budget is refused (422) when max_runs_per_day x 11 x the per-query limit is above it. 422 connector_disabled for a type whose driver is not installed; 422 admin_role_refused (warehouse rule 6) when the input names a built-in administrative role or user (Snowflake settings.role, the PostgreSQL postgres user, the Redshift rdsdb user) and, for PostgreSQL and Redshift, when signing in finds a superuser or a member of a managed service's administrative role: creating signs in for that check (429 warehouse_busy when no warehouse job is free); a sign-in that fails otherwise does not stop the creation. The test, validation and every run check the role again. PostgreSQL and Redshift connect with TLS and a verified certificate unless settings.ssl is false. 503 credentials_unavailable without a credential key.", body: ConnectionCreate,
      response: { 201: ConnectionView, ...errorResponses(401, 403, 422, 503) },
    },
  }, async (req, reply) => reply.code(201).send(await warehouse.createConnection(actorOf(req), req.body)));

  app.post('/connections/test', {
    config: access(ADMIN),
    schema: {
      tags, ...beta, operationId: 'testUnsavedWarehouseConnection', description: 'Beta; ADMIN only. Signs in with the settings and credentials sent and runs a statement that reads no table, within 30 seconds; nothing is stored and no daily run is counted. A failure to connect is a 200 with ok false, an error_code and a message. The body may be a create body: its name is accepted and ignored. 422 for invalid settings, connector_disabled or admin_role_refused, 429 warehouse_busy when this process has no warehouse job free (Retry-After: 30), 503 credentials_unavailable without a credential key.', summary: 'Sign in with unsaved settings and run a statement that reads no table; nothing is stored',
      body: ConnectionTestBody, response: { 200: ConnectionTestResult, ...errorResponses(401, 403, 422, 429, 503) },
    },
  }, (req) => warehouse.testUnsaved(req.body));

  app.get('/connections/:connection_id', {
    config: access(READERS),
    schema: { tags, ...beta, operationId: 'readWarehouseConnection', summary: 'Read one warehouse connection (never its credentials)', description: "Beta; ADMIN, DEVELOPER or ANALYST (any other role is 403 role_required). Returns the connection's settings, limits, daily worst case and status; credentials are never returned, and settings that are or look like secrets are shown to ADMIN only. 404 for an unknown connection; 503 credentials_unavailable when no credential key is configured.", params: ConnectionParams, response: { 200: ConnectionView, ...errorResponses(401, 403, 404, 422, 503) } },
  }, (req) => warehouse.getConnection(actorOf(req), req.params.connection_id));

  app.put('/connections/:connection_id', {
    config: access(ADMIN),
    schema: {
      tags, ...beta, operationId: 'updateWarehouseConnection', summary: "Change a warehouse connection's name, settings, credentials or limits", description: 'Beta; ADMIN only. Changes the fields sent: new credentials replace the stored ones. A change of a setting that says where or how to sign in (host, port, url, account, database, http_path, ssl, role, project...) drops the stored credentials unless the same request sends new ones: the connection then shows status needs_new_credentials and using it is 409 credentials_required. Otherwise the stored credentials are re-sealed with the newest key; the change is audited without credentials. The body may repeat what a GET returned: id, warehouse_type and created_at are accepted when they equal the stored values (else 422 immutable at the field), status and updated_at are ignored, and bytes_limit, worst_case_bytes_per_day and worst_case_seconds_per_day sent back as a GET shows them change nothing. Limits stay within the deployment settings and the stored or sent daily worst-case budgets (else 422). 422 admin_role_refused (warehouse rule 6) as on create: for PostgreSQL and Redshift a change of settings or credentials signs in to check the role. 409 connection_changed when the connection changed while that check ran; 404 for an unknown connection; 503 credentials_unavailable without a credential key.', params: ConnectionParams, body: ConnectionUpdate,
      response: { 200: ConnectionView, ...errorResponses(401, 403, 404, 422, 503) },
    },
  }, (req) => warehouse.updateConnection(actorOf(req), req.params.connection_id, req.body));

  app.delete('/connections/:connection_id', {
    config: access(ADMIN),
    schema: {
      tags, ...beta, operationId: 'deleteWarehouseConnection', summary: 'Delete a warehouse connection and its credentials', description: "Beta; ADMIN only. Deletes the connection with its stored credentials; the deletion is audited, and past analyses keep their results and the connection's name. A connection that still has sources is 409 connection_in_use (delete its sources first); 404 for an unknown connection.", params: ConnectionParams,
      response: { 204: Type.Null({ description: 'Deleted with its credentials' }), ...errorResponses(401, 403, 404, 409, 422) },
    },
  }, async (req, reply) => {
    await warehouse.deleteConnection(actorOf(req), req.params.connection_id);
    return reply.code(204).send(null);
  });

  app.post('/connections/:connection_id/test', {
    config: access(ADMIN),
    schema: {
      tags, ...beta, operationId: 'testWarehouseConnection', summary: 'Test a saved warehouse connection', description: 'Beta; ADMIN only. Signs in with the stored settings and credentials and runs a statement that reads no table, within 30 seconds; it does not count against max_runs_per_day. A failure to connect is a 200 with ok false, an error_code and a message. 404 for an unknown connection, 409 credentials_undecryptable when the configured keys cannot open its credentials or credentials_required when they were dropped by a change of where it signs in, 429 warehouse_busy (Retry-After: 30), 503 credentials_unavailable.', params: ConnectionParams,
      response: { 200: ConnectionTestResult, ...errorResponses(401, 403, 404, 409, 422, 429, 503) },
    },
  }, (req) => warehouse.testSaved(req.params.connection_id));

  app.post('/connections/:connection_id/regenerate-key', {
    config: access(ADMIN),
    schema: {
      tags, ...beta, operationId: 'regenerateWarehouseConnectionKey', description: "Beta; ADMIN only, for warehouse types that sign in with a key pair the platform generates (else 422 key_pair_not_supported). Generates a new 2048-bit RSA key pair, stores the private key encrypted with the connection's credentials and returns the public key and its fingerprint once; audited. 404 for an unknown connection, 409 credentials_undecryptable, 503 credentials_unavailable.", summary: 'A new RSA key pair; the public key is returned once',
      params: ConnectionParams, response: { 200: GeneratedKey, ...errorResponses(401, 403, 404, 409, 422, 503) },
    },
  }, (req) => warehouse.regenerateKey(actorOf(req), req.params.connection_id));

  app.get('/sources', {
    config: access(READERS),
    schema: { tags, ...beta, operationId: 'listWarehouseSources', summary: 'List warehouse sources', description: 'Beta; ADMIN, DEVELOPER or ANALYST (any other role is 403 role_required). Lists assignment and metric sources with their table, column mapping, filters and validation state (validated_at and validation_errors).', response: { 200: Type.Array(SourceView), ...errorResponses(401, 403) } },
  }, () => warehouse.listSources());

  app.post('/sources', {
    config: access(READERS),
    schema: { tags, ...beta, operationId: 'createWarehouseSource', summary: 'Create an assignment or metric source', description: "Beta. ADMIN or DEVELOPER may create any source; an ANALYST only a metric source (an assignment source is 403 role_required). The table must be fully qualified under the warehouse's identifier rules, filters use operator eq and a text value may hold only letters, digits, spaces and _ . : @ / + -; anything else is 422, as is an unknown connection_id. The source starts unvalidated and must be validated before a preview or analysis uses it; the creation is audited with its full definition.", body: SourceCreate, response: { 201: SourceView, ...errorResponses(401, 403, 422) } },
  }, async (req, reply) => reply.code(201).send(await warehouse.createSource(actorOf(req), req.body)));

  app.get('/sources/:source_id', {
    config: access(READERS),
    schema: { tags, ...beta, operationId: 'readWarehouseSource', summary: 'Read one warehouse source', description: "Beta; ADMIN, DEVELOPER or ANALYST (any other role is 403 role_required). Returns the source's definition and its validation state. 404 for an unknown source.", params: SourceParams, response: { 200: SourceView, ...errorResponses(401, 403, 404, 422) } },
  }, (req) => warehouse.getSource(req.params.source_id));

  app.put('/sources/:source_id', {
    config: access(READERS),
    schema: {
      tags, ...beta, operationId: 'updateWarehouseSource', description: "Beta. ADMIN or DEVELOPER may change any source; an ANALYST only a metric source (else 403 role_required). Changes the fields sent under the same rules as creation (422 otherwise) and clears the source's validation, so it must be validated again before a preview or analysis; audited with the definition before and after. The body may repeat what a GET returned: id, kind, connection_id and created_at are accepted when they equal the stored values (else 422 immutable at the field), validated_at, validation_errors and updated_at are ignored, and metric_type null is accepted for an assignment source. 404 for an unknown source.", summary: 'Change a source; clears its validation',
      params: SourceParams, body: SourceUpdate, response: { 200: SourceView, ...errorResponses(401, 403, 404, 422) },
    },
  }, (req) => warehouse.updateSource(actorOf(req), req.params.source_id, req.body));

  app.delete('/sources/:source_id', {
    config: access(EDITORS),
    schema: {
      tags, ...beta, operationId: 'deleteWarehouseSource', summary: 'Delete a warehouse source', description: 'Beta; ADMIN or DEVELOPER (any other role is 403 role_required). Deletes the source; past runs keep their own copy of its definition. The deletion is audited; 404 for an unknown source.', params: SourceParams,
      response: { 204: Type.Null({ description: 'Deleted; runs keep their own copy of the definition' }), ...errorResponses(401, 403, 404, 422) },
    },
  }, async (req, reply) => {
    await warehouse.deleteSource(actorOf(req), req.params.source_id);
    return reply.code(204).send(null);
  });

  app.post('/sources/:source_id/validate', {
    config: access(READERS),
    schema: {
      tags, ...beta, operationId: 'validateWarehouseSource', description: 'Beta. ADMIN or DEVELOPER for any source; an ANALYST for a metric source only (else 403 role_required). Checks, within 30 seconds and from metadata only, that the table exists and the mapped and filter columns are in it with date or numeric types where needed; it reads no data and does not count against max_runs_per_day. Returns valid and the errors found, and records them on the source (audited). 404 for an unknown source, 409 credentials_undecryptable, 429 warehouse_busy (Retry-After: 30), 503 credentials_unavailable.', summary: 'Check table and columns against metadata; reads no data',
      params: SourceParams, response: { 200: ValidationResult, ...errorResponses(401, 403, 404, 409, 422, 429, 503) },
    },
  }, (req) => warehouse.validateSource(actorOf(req), req.params.source_id));

  app.post('/sources/:source_id/preview', {
    config: access(READERS),
    schema: {
      tags, ...beta, operationId: 'previewWarehouseSource', description: "Beta. ADMIN or DEVELOPER for any source; an ANALYST for a metric source only (else 403 role_required). Queues a preview of a validated source over the window sent, by default the last 7 days, and answers 202 with the run; the run reports rows, units, units per variant label, earliest and latest time. It counts against the connection's max_runs_per_day: 409 source_not_validated or run_in_progress (one run at a time per connection), 429 daily_run_limit_reached (Retry-After until 00:00 UTC) or warehouse_busy, 503 credentials_unavailable.", summary: 'Queue a preview run (last 7 days by default); read its counts at GET /runs/{run_id}',
      params: SourceParams, body: Type.Optional(PreviewBody), response: { 202: RunView, ...errorResponses(401, 403, 404, 409, 422, 429, 503) },
    },
  }, async (req, reply) => reply.code(202).send(await warehouse.preview(actorOf(req), req.params.source_id, req.body ?? {})));

  app.post('/experiments/:experiment_id/runs', {
    config: access(EDITORS),
    schema: {
      tags, ...beta, operationId: 'startWarehouseAnalysis', description: "Beta; ADMIN or DEVELOPER (any other role is 403 role_required). Queues an analysis of the experiment from a validated assignment source and 1 to 10 validated metric sources of the same connection, over the window sent (default: the experiment's start date up to its end date or now; a time without offset is UTC); variant_map maps warehouse labels to variant ids, other labels match by variant name. Answers 202 with the run and is audited. 404 for an unknown experiment or connection, 409 source_not_validated or run_in_progress, 422 for a wrong source kind or connection or an unknown variant, 429 daily_run_limit_reached or warehouse_busy, 503 credentials_unavailable.", summary: 'Queue an analysis; 202 with the run',
      params: ExperimentParams, body: RunCreate, response: { 202: RunView, ...errorResponses(401, 403, 404, 409, 422, 429, 503) },
    },
  }, async (req, reply) => reply.code(202).send(await warehouse.startAnalysis(actorOf(req), req.params.experiment_id, req.body)));

  app.get('/experiments/:experiment_id/runs', {
    config: access(READERS),
    schema: {
      tags, ...beta, operationId: 'listWarehouseAnalyses', description: "Beta; ADMIN, DEVELOPER or ANALYST (any other role is 403 role_required). Lists the experiment's warehouse analyses, newest first, each with status, results, sample-ratio check and the SQL sent; paged with skip (default 0) and limit (default 50, at most 200). 404 for an unknown experiment.", summary: "The experiment's analyses, newest first",
      params: ExperimentParams, querystring: RunListQuery, response: { 200: Type.Array(RunView), ...errorResponses(401, 403, 404, 422) },
    },
  }, (req) => warehouse.listRuns(req.params.experiment_id, req.query.skip, req.query.limit));

  app.get('/runs/:run_id', {
    config: access(READERS),
    schema: {
      tags, ...beta, operationId: 'readWarehouseRun', description: 'Beta; ADMIN, DEVELOPER or ANALYST (any other role is 403 role_required). Returns one analysis or preview: status (queued, running, succeeded, failed), results per metric or preview counts, the sample-ratio check, diagnostics and the SQL sent. A failed run carries an error_code and no numbers; a metric that cannot be computed has a note starting Not computed:. 404 for an unknown run.', summary: 'One analysis or preview: status, results and the SQL sent',
      params: RunParams, response: { 200: RunView, ...errorResponses(401, 403, 404, 422) },
    },
  }, (req) => warehouse.getRun(req.params.run_id));
};
