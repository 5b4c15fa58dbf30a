import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import { open } from '../../platform/auth.js';
import { API_VERSION } from '../../platform/openapi.js';
import { errorResponses, StringEnum } from '../../platform/schemas.js';
import { toolsFromOpenApi } from './manifest.js';

const OPERATION_ID = 'getMcpManifest';

const Manifest = Type.Object({
  name: Type.String(),
  version: Type.String(),
  description: Type.String(),
  server: Type.Null({ description: 'No tool-protocol server runs; call each tool as its HTTP operation' }),
  authentication: Type.Object({ bearer: Type.String(), api_key: Type.String() }),
  tools: Type.Array(
    Type.Object({
      name: Type.String(),
      description: Type.String(),
      inputSchema: Type.Object({}, { additionalProperties: true }),
      http: Type.Object({ method: Type.String(), path: Type.String() }),
      authentication: StringEnum(['none', 'bearer', 'api_key']),
      deprecated: Type.Boolean(),
      beta: Type.Boolean(),
    }),
  ),
});

export const mcpRoutes: FastifyPluginAsyncTypebox = async (app) => {
  let manifest: Static<typeof Manifest> | undefined;
  app.get('/manifest', {
    config: { access: open() },
    schema: {
      tags: ['mcp'], operationId: OPERATION_ID, summary: "The API's operations described as tools (no sign-in)",
      description: "Open route. Describes the API's operations as tools with their inputs, for assistants that call the HTTP API; no tool-protocol server runs behind it.",
      response: { 200: Manifest, ...errorResponses(429) },
    },
  }, () => {
    // Built on first use: the OpenAPI document is complete only once every module has registered.
    manifest ??= {
      name: 'uplift',
      version: API_VERSION,
      description:
        'Uplift experimentation platform: experiments, feature flags, tracking, results. Each tool is an HTTP operation ' +
        'of this API; send inputs as path and query parameters and `body` as the JSON body.',
      server: null,
      authentication: {
        bearer: 'Authorization: Bearer <token> from POST /api/v1/auth/login',
        api_key: 'X-API-Key: <key> from POST /api/v1/api-keys',
      },
      tools: toolsFromOpenApi(app.swagger() as never, [OPERATION_ID]),
    };
    return manifest;
  });
};
