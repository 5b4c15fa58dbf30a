/**
 * An audit entry's change as readable field differences: its before and after flattened to paths
 * (`targeting_rules › groups 1 › conditions 1 › value`), each changed path once, with values written as text.
 */
export interface FieldChange {
  field: string;
  before: string;
  after: string;
}

/** Bookkeeping that changes on every write and says nothing to a reader. */
const SKIPPED = new Set(['updated_at', 'created_at', 'id', 'version']);

const label = (key: string) => {
  const text = key.replace(/_/g, ' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
};

export function showValue(value: unknown): string {
  if (value === undefined || value === null) return '—';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'string') return value === '' ? '(empty)' : value;
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value)) return value.length === 0 ? '—' : value.every((v) => v === null || typeof v !== 'object') ? value.map(showValue).join(', ') : `${value.length} items`;
  return '(object)';
}

function flatten(value: unknown, path: string[], out: Map<string, unknown>): void {
  const isLeafArray = Array.isArray(value) && value.every((v) => v === null || typeof v !== 'object');
  if (value !== null && typeof value === 'object' && !isLeafArray && (Array.isArray(value) ? value.length > 0 : Object.keys(value).length > 0)) {
    for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
      if (path.length === 0 && SKIPPED.has(key)) continue;
      flatten(child, [...path, Array.isArray(value) ? String(Number(key) + 1) : key], out);
    }
    return;
  }
  out.set(path.join('\u0000'), value);
}

export function fieldChanges(before: unknown, after: unknown): FieldChange[] {
  const a = new Map<string, unknown>();
  const b = new Map<string, unknown>();
  if (before && typeof before === 'object') flatten(before, [], a);
  if (after && typeof after === 'object') flatten(after, [], b);
  const changes: FieldChange[] = [];
  for (const key of new Set([...a.keys(), ...b.keys()])) {
    const from = showValue(a.get(key));
    const to = showValue(b.get(key));
    // Same text is no change to a reader (null and [] are both "—").
    if (from === to) continue;
    const parts = key.split('\u0000');
    changes.push({ field: parts.map((p, i) => (i === 0 ? label(p) : /^\d+$/.test(p) ? `#${p}` : p.replace(/_/g, ' '))).join(' › '), before: from, after: to });
  }
  return changes;
}

/** `feature_flag_update` → "Updated"; `experiment_start` → "Started"; unknown actions in words. */
export function actionText(action: string, entityType: string): string {
  const verb = action.startsWith(`${entityType}_`) ? action.slice(entityType.length + 1) : action;
  const known: Record<string, string> = {
    create: 'Created', update: 'Updated', delete: 'Deleted', archive: 'Archived', unarchive: 'Unarchived', activate: 'Turned on', deactivate: 'Turned off',
    start: 'Started', pause: 'Paused', resume: 'Resumed', complete: 'Completed', clone: 'Cloned', toggle: 'Toggled', rollback: 'Rolled back',
  };
  return known[verb] ?? label(verb);
}
