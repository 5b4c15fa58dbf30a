import { OPERATORS } from '../../../src/targeting/types';

/**
 * The targeting rule builder shared by experiments, flags and segments. It edits a text model (what the inputs
 * hold) and converts to and from the API's rule object, so a number stays a number and a list a list.
 */
export type Operator = (typeof OPERATORS)[number];
const SEGMENT_OPERATORS: readonly string[] = ['in_segment', 'not_in_segment'];
const LIST_OPERATORS: readonly string[] = ['in', 'not_in'];
const NUMBER_OPERATORS: readonly string[] = ['gt', 'gte', 'lt', 'lte'];
const NO_VALUE_OPERATORS: readonly string[] = ['is_null', 'is_not_null'];

export interface ConditionDraft {
  attribute: string;
  operator: Operator;
  value: string;
}
export interface GroupDraft {
  logical_operator: 'AND' | 'OR';
  conditions: ConditionDraft[];
}
export interface RulesDraft {
  logical_operator: 'AND' | 'OR';
  groups: GroupDraft[];
}

export type TargetingRules = {
  logical_operator: 'AND' | 'OR';
  groups: Array<{ logical_operator: 'AND' | 'OR'; conditions: Array<{ attribute: string; operator: string; value?: unknown }> }>;
};

export const emptyRules = (): RulesDraft => ({ logical_operator: 'AND', groups: [] });
const newCondition = (): ConditionDraft => ({ attribute: '', operator: 'equals', value: '' });

function conditionValue(c: ConditionDraft): unknown {
  if (NO_VALUE_OPERATORS.includes(c.operator)) return undefined;
  if (LIST_OPERATORS.includes(c.operator)) return c.value.split(',').map((v) => v.trim()).filter(Boolean);
  if (NUMBER_OPERATORS.includes(c.operator) && c.value.trim() !== '' && Number.isFinite(Number(c.value))) return Number(c.value);
  return c.value;
}

/** The API's rule object, or null when there are no groups (no targeting). */
export function toRules(draft: RulesDraft): TargetingRules | null {
  if (draft.groups.length === 0) return null;
  return {
    logical_operator: draft.logical_operator,
    groups: draft.groups.map((g) => ({
      logical_operator: g.logical_operator,
      conditions: g.conditions.map((c) => {
        const attribute = SEGMENT_OPERATORS.includes(c.operator) ? 'segment' : c.attribute.trim();
        const value = conditionValue(c);
        return value === undefined ? { attribute, operator: c.operator } : { attribute, operator: c.operator, value };
      }),
    })),
  };
}

export function fromRules(rules: unknown): RulesDraft {
  const r = rules as Partial<TargetingRules> | null | undefined;
  if (!r || !Array.isArray(r.groups)) return emptyRules();
  return {
    logical_operator: r.logical_operator === 'OR' ? 'OR' : 'AND',
    groups: r.groups.map((g) => ({
      logical_operator: g.logical_operator === 'OR' ? 'OR' : 'AND',
      conditions: (g.conditions ?? []).map((c) => ({
        attribute: c.attribute ?? '',
        operator: (OPERATORS as readonly string[]).includes(c.operator) ? (c.operator as Operator) : 'equals',
        value: Array.isArray(c.value) ? c.value.join(', ') : c.value === undefined || c.value === null ? '' : String(c.value),
      })),
    })),
  };
}

const OPERATOR_LABELS: Partial<Record<Operator, string>> = {
  equals: 'equals',
  not_equals: 'does not equal',
  in: 'is one of',
  not_in: 'is not one of',
  is_null: 'is missing',
  is_not_null: 'is present',
  in_segment: 'is in segment',
  not_in_segment: 'is not in segment',
};

export function RuleBuilder({
  value,
  onChange,
  segments,
  error,
  idPrefix = 'rules',
}: {
  value: RulesDraft;
  onChange(next: RulesDraft): void;
  /** Segments a condition may name; leave out where segment operators are not allowed (segment rules). */
  segments?: ReadonlyArray<{ id: string; name: string }>;
  error?: string;
  idPrefix?: string;
}) {
  const operators = OPERATORS.filter((o) => segments || !SEGMENT_OPERATORS.includes(o));
  const setGroup = (gi: number, group: GroupDraft) => onChange({ ...value, groups: value.groups.map((g, i) => (i === gi ? group : g)) });
  const setCondition = (gi: number, ci: number, patch: Partial<ConditionDraft>) => {
    const group = value.groups[gi];
    setGroup(gi, { ...group, conditions: group.conditions.map((c, i) => (i === ci ? { ...c, ...patch } : c)) });
  };
  return (
    <fieldset className={`rule-builder${error ? ' field-invalid' : ''}`} aria-describedby={error ? `${idPrefix}-error` : undefined}>
      <legend>Targeting rules</legend>
      {value.groups.length === 0 && <p className="hint">No rules: everyone is eligible.</p>}
      {value.groups.length > 1 && (
        <label className="inline">
          Groups combine with{' '}
          <select
            value={value.logical_operator}
            onChange={(e) => onChange({ ...value, logical_operator: e.target.value as 'AND' | 'OR' })}
          >
            <option value="AND">AND (all groups)</option>
            <option value="OR">OR (any group)</option>
          </select>
        </label>
      )}
      {value.groups.map((group, gi) => (
        <div className="rule-group" key={gi} role="group" aria-label={`Group ${gi + 1}`}>
          <div className="rule-group-head">
            <strong>Group {gi + 1}</strong>
            <label className="inline">
              Conditions combine with{' '}
              <select value={group.logical_operator} onChange={(e) => setGroup(gi, { ...group, logical_operator: e.target.value as 'AND' | 'OR' })}>
                <option value="AND">AND</option>
                <option value="OR">OR</option>
              </select>
            </label>
            <button type="button" className="link danger" onClick={() => onChange({ ...value, groups: value.groups.filter((_, i) => i !== gi) })}>
              Remove group
            </button>
          </div>
          {group.conditions.map((c, ci) => {
            const isSegment = SEGMENT_OPERATORS.includes(c.operator);
            const noValue = NO_VALUE_OPERATORS.includes(c.operator);
            const base = `${idPrefix}-${gi}-${ci}`;
            return (
              <div className="rule-condition" key={ci}>
                {!isSegment && (
                  <label>
                    <span className="visually-hidden">Attribute</span>
                    <input
                      id={`${base}-attr`}
                      placeholder="attribute, e.g. country"
                      value={c.attribute}
                      onChange={(e) => setCondition(gi, ci, { attribute: e.target.value })}
                    />
                  </label>
                )}
                <label>
                  <span className="visually-hidden">Operator</span>
                  <select value={c.operator} onChange={(e) => setCondition(gi, ci, { operator: e.target.value as Operator })}>
                    {operators.map((o) => (
                      <option key={o} value={o}>
                        {OPERATOR_LABELS[o] ?? o.replace(/_/g, ' ')}
                      </option>
                    ))}
                  </select>
                </label>
                {isSegment ? (
                  <label>
                    <span className="visually-hidden">Segment</span>
                    <select value={c.value} onChange={(e) => setCondition(gi, ci, { value: e.target.value })}>
                      <option value="">Choose a segment…</option>
                      {(segments ?? []).map((s) => (
                        <option key={s.id} value={s.id}>
                          {s.name}
                        </option>
                      ))}
                    </select>
                  </label>
                ) : (
                  !noValue && (
                    <label>
                      <span className="visually-hidden">Value</span>
                      <input
                        placeholder={LIST_OPERATORS.includes(c.operator) ? 'a, b, c' : 'value'}
                        value={c.value}
                        onChange={(e) => setCondition(gi, ci, { value: e.target.value })}
                      />
                    </label>
                  )
                )}
                <button
                  type="button"
                  className="icon"
                  aria-label={`Remove condition ${ci + 1} of group ${gi + 1}`}
                  onClick={() => setGroup(gi, { ...group, conditions: group.conditions.filter((_, i) => i !== ci) })}
                >
                  ×
                </button>
              </div>
            );
          })}
          <button type="button" className="link" onClick={() => setGroup(gi, { ...group, conditions: [...group.conditions, newCondition()] })}>
            + Add condition
          </button>
        </div>
      ))}
      <button
        type="button"
        className="secondary"
        onClick={() => onChange({ ...value, groups: [...value.groups, { logical_operator: 'AND', conditions: [newCondition()] }] })}
      >
        + Add rule group
      </button>
      {error && (
        <p className="field-error" id={`${idPrefix}-error`} role="alert">
          {error}
        </p>
      )}
    </fieldset>
  );
}
