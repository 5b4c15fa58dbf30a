/**
 * Describes the API's operations as tools in the shape tool-calling clients read (name, description, inputSchema),
 * derived from the OpenAPI document so it never drifts from the routes. No tool-protocol server runs: a client
 * calls each tool as the HTTP operation it names.
 */
export interface ManifestTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  http: { method: string; path: string };
  authentication: 'none' | 'bearer' | 'api_key';
  deprecated: boolean;
  beta: boolean;
}

interface OpenApiParameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: Record<string, unknown>;
}

interface OpenApiOperation {
  operationId?: string;
  summary?: string;
  description?: string;
  parameters?: OpenApiParameter[];
  requestBody?: { content?: Record<string, { schema?: Record<string, unknown> }> };
  security?: Array<Record<string, unknown>>;
  deprecated?: boolean;
  'x-stability'?: string;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
/** Parameter locations a tool caller fills in; headers such as Last-Event-ID are transport details. */
const TOOL_PARAMETERS = new Set(['path', 'query']);

function inputSchema(operation: OpenApiOperation): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  for (const parameter of operation.parameters ?? []) {
    if (!TOOL_PARAMETERS.has(parameter.in)) continue;
    properties[parameter.name] = { ...parameter.schema, ...(parameter.description ? { description: parameter.description } : {}) };
    if (parameter.required) required.push(parameter.name);
  }
  const body = operation.requestBody?.content?.['application/json']?.schema;
  if (body) {
    properties.body = body;
    required.push('body');
  }
  return { type: 'object', properties, required, additionalProperties: false };
}

function authenticationOf(operation: OpenApiOperation): ManifestTool['authentication'] {
  const scheme = Object.keys(operation.security?.[0] ?? {})[0];
  return scheme === 'bearer' ? 'bearer' : scheme === 'apiKey' ? 'api_key' : 'none';
}

export function toolsFromOpenApi(document: { paths?: Record<string, Record<string, OpenApiOperation>> }, exclude: string[]): ManifestTool[] {
  const tools: ManifestTool[] = [];
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation?.operationId || exclude.includes(operation.operationId)) continue;
      tools.push({
        name: operation.operationId,
        description: operation.summary ?? operation.description ?? `${method.toUpperCase()} ${path}`,
        inputSchema: inputSchema(operation),
        http: { method: method.toUpperCase(), path },
        authentication: authenticationOf(operation),
        deprecated: operation.deprecated === true,
        beta: operation['x-stability'] === 'beta',
      });
    }
  }
  return tools.sort((a, b) => a.name.localeCompare(b.name));
}
