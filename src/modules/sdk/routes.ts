import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import { apiKey } from '../../platform/auth.js';
import { errorResponses } from '../../platform/schemas.js';
import { SdkRuleset } from './schemas.js';
import { matchesIfNoneMatch, type SdkService } from './service.js';

const tags = ['sdk'];

export const sdkRoutes: FastifyPluginAsyncTypebox<{ sdk: SdkService }> = async (app, { sdk }) => {
  app.get('/ruleset', {
    config: { access: apiKey({ scope: 'sdk:ruleset' }) },
    schema: {
      tags, operationId: 'downloadSdkRuleset',
      summary: 'Every flag with its targeting rules and rollout, the segments they name and the bucketing version; ETag and 304',
      description: 'Needs an API key with scope sdk:ruleset (403 otherwise). Every flag with its targeting rules and rollout, the segments they name and the bucketing version, for local evaluation. Send If-None-Match with the last ETag to get 304 when nothing changed.',
      headers: Type.Object({ 'if-none-match': Type.Optional(Type.String()) }),
      response: { 200: SdkRuleset, 304: Type.Null({ description: 'Not modified: the ETag sent is current' }), ...errorResponses(401, 403, 429) },
    },
  }, async (req, reply) => {
    const body = await sdk.ruleset();
    // no-cache: clients may store the ruleset but must revalidate it every time (flags are never served stale).
    reply.header('ETag', body.etag).header('Cache-Control', 'no-cache');
    if (matchesIfNoneMatch(req.headers['if-none-match'], body.etag)) return reply.code(304).send(null);
    // The bytes the ETag hashes are sent as they are (Fastify does not re-serialise a string payload).
    return reply.type('application/json; charset=utf-8').send(body.json as unknown as Static<typeof SdkRuleset>);
  });
};
