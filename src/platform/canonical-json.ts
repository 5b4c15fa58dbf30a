/**
 * JSON with object keys sorted (by UTF-16 code units, as Array.prototype.sort) at every level, so equal values give
 * equal text whatever order their keys arrived in (jsonb does not keep it). Undefined object members are left out and
 * undefined array items are null, as JSON.stringify does. Audit entries are signed over this text (their HMACs are
 * stored, audit-logs/chain.ts): its output for JSON values must never change.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null);
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item === undefined ? null : item)).join(',')}]`;
  const record = value as Record<string, unknown>;
  const members = Object.keys(record)
    .filter((key) => record[key] !== undefined)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`);
  return `{${members.join(',')}}`;
}
