/** JSON with object keys sorted at every level, so snapshots diff line by line. */
export function stableStringify(value: unknown): string {
  return JSON.stringify(sortKeys(value), null, 2);
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]));
  }
  return value;
}

export type Operation = Record<string, unknown> & { 'x-stability'?: string; deprecated?: boolean; summary?: string };
export type OpenApiDoc = { paths: Record<string, Record<string, Operation>> };

export function operations(doc: OpenApiDoc): Map<string, Operation> {
  const out = new Map<string, Operation>();
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) out.set(`${method.toUpperCase()} ${path}`, op);
  }
  return out;
}

/** The parts of an operation the contract pins: parameters, request body and responses. */
export function contractOf(op: Operation): unknown {
  return sortKeys({ parameters: op.parameters ?? [], requestBody: op.requestBody ?? null, responses: op.responses ?? {} });
}
