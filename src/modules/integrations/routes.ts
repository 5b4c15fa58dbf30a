import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { IntegrationType } from '../../db/schema/integrations.js';
import { actorOf, open, role } from '../../platform/auth.js';
import { errorResponses } from '../../platform/schemas.js';
import { IntegrationCreate, IntegrationTypeParams, IntegrationUpdate, IntegrationView, WebhookReceived } from './schemas.js';
import type { IntegrationsService } from './service.js';

const tags = ['integrations'];

export const integrationsRoutes: FastifyPluginAsyncTypebox<{ integrations: IntegrationsService }> = async (app, { integrations }) => {
  app.post('', {
    config: { access: role('ADMIN') },
    schema: {
      tags, operationId: 'createIntegration', summary: 'Create the configuration of one integration type (one per type)',
      description: 'ADMIN only. Stores the configuration of one integration type; there is one per type, so a second one of the same type is 409. Inactive by default: only an active integration accepts webhooks.',
      body: IntegrationCreate,
      response: { 201: IntegrationView, ...errorResponses(401, 403, 409, 422) },
    },
  }, async (req, reply) => reply.code(201).send(await integrations.create(actorOf(req), req.body)));

  app.get('', {
    config: { access: role('ADMIN', 'DEVELOPER') },
    schema: { tags, operationId: 'listIntegrations', summary: 'Configured integrations (secrets never shown)', description: 'ADMIN and DEVELOPER (ANALYST and VIEWER 403). Each configured integration with its non-secret settings; secret values are never returned, only their names in stored_secrets.', response: { 200: Type.Array(IntegrationView), ...errorResponses(401, 403) } },
  }, () => integrations.list());

  app.get('/:integration_type', {
    config: { access: role('ADMIN', 'DEVELOPER') },
    schema: {
      tags, operationId: 'readIntegration', summary: 'An integration (secrets never shown)', params: IntegrationTypeParams,
      description: 'ADMIN and DEVELOPER. The configuration of one type with non-secret keys only; unknown type is 404.',
      response: { 200: IntegrationView, ...errorResponses(401, 403, 404, 422) },
    },
  }, (req) => integrations.get(req.params.integration_type));

  app.put('/:integration_type', {
    config: { access: role('ADMIN') },
    schema: {
      tags, operationId: 'updateIntegration', summary: 'Change is_active and merge encrypted_config key by key (null removes)',
      description: 'ADMIN only. Sets is_active and merges encrypted_config key by key: a key sent with a value replaces it, a key sent as null is removed, a key not sent is kept.',
      params: IntegrationTypeParams, body: IntegrationUpdate,
      response: { 200: IntegrationView, ...errorResponses(401, 403, 404, 409, 422) },
    },
  }, (req) => integrations.update(actorOf(req), req.params.integration_type, req.body));

  app.delete('/:integration_type', {
    config: { access: role('ADMIN') },
    schema: {
      tags, operationId: 'deleteIntegration', summary: 'Remove an integration', params: IntegrationTypeParams,
      description: 'ADMIN only. Removes the configuration of that type, including its secrets; its webhooks are refused afterwards. Unknown type is 404.',
      response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses(401, 403, 404, 422) },
    },
  }, async (req, reply) => {
    await integrations.delete(actorOf(req), req.params.integration_type);
    return reply.code(204).send(null);
  });

  await app.register(webhookRoutes, { integrations });
};

const RECEIVERS: Array<{ type: IntegrationType; summary: string }> = [
  { type: 'github', summary: 'Code host events, authenticated by X-Hub-Signature-256 (HMAC-SHA256 of the raw body)' },
  { type: 'jira', summary: 'Issue tracker events, authenticated by the shared secret in X-Webhook-Secret' },
  { type: 'salesforce', summary: 'CRM callouts, authenticated by the shared secret in X-Webhook-Secret' },
];
const RECEIVER_DESCRIPTIONS: Record<IntegrationType, string> = {
  github: 'Open route authenticated by signature: X-Hub-Signature-256 must be sha256= and the hex HMAC-SHA256 of the raw body keyed with the stored webhook_secret. Any refusal (bad or missing signature, inactive or missing integration) is 401; a body that is not a JSON object is 400. The delivery is acknowledged and logged; nothing in the platform changes.',
  jira: 'Open route authenticated by the shared secret: X-Webhook-Secret must equal the stored webhook_secret. Any refusal (wrong or missing secret, inactive or missing integration) is 401; a body that is not a JSON object is 400. The delivery is acknowledged and logged; nothing in the platform changes.',
  salesforce: 'Open route authenticated by the shared secret: X-Webhook-Secret must equal the stored webhook_secret. Any refusal (wrong or missing secret, inactive or missing integration) is 401; a body that is not a JSON object is 400. The callout is acknowledged and logged; nothing in the platform changes.',
};

/**
 * The receivers live in their own encapsulated context whose only body parser hands over the raw bytes whatever
 * the Content-Type: the signature covers the body exactly as sent, which re-serialised JSON would not reproduce.
 */
const webhookRoutes: FastifyPluginAsyncTypebox<{ integrations: IntegrationsService }> = async (app, { integrations }) => {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  for (const { type, summary } of RECEIVERS) {
    app.post(`/webhooks/${type}`, {
      config: { access: open() },
      schema: {
        tags, operationId: `receive${type[0].toUpperCase()}${type.slice(1)}Webhook`, summary,
        description: RECEIVER_DESCRIPTIONS[type],
        response: { 200: WebhookReceived, ...errorResponses(400, 401, 413) },
      },
    }, (req) =>
      integrations.receive(type, { rawBody: Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0), headers: req.headers }, req.log),
    );
  }
};
