import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { evaluateFlag, hasTargetingRules, type FlagDefinition } from './flag.js';
import { bucketFor, flagSalt } from './hash.js';
import type { CompiledSegment, EvaluationEnv } from './types.js';

const US = { logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'country', operator: 'equals', value: 'US' }] }] };
const flag = (over: Partial<FlagDefinition> = {}): FlagDefinition => ({
  key: 'new-checkout',
  is_active: true,
  status: 'active',
  rollout_percentage: 100,
  targeting_rules: null,
  ...over,
});
/** A user id whose bucket for the flag is below / at-or-above `pct` %. */
function userWithBucket(key: string, inside: boolean, pct: number): string {
  for (let i = 0; ; i++) {
    const id = `u${i}`;
    if (bucketFor(flagSalt(key), id) < pct * 100 === inside) return id;
  }
}

describe('evaluateFlag decision table', () => {
  it('inactive or archived → disabled', () => {
    expect(evaluateFlag(flag({ is_active: false }), 'u1', {})).toEqual({ enabled: false, reason: 'disabled' });
    expect(evaluateFlag(flag({ status: 'archived' }), 'u1', {})).toEqual({ enabled: false, reason: 'disabled' });
    expect(evaluateFlag(flag({ is_active: false, targeting_rules: US }), 'u1', { country: 'US' })).toEqual({ enabled: false, reason: 'disabled' });
  });
  it('no rules: rollout decides', () => {
    expect(evaluateFlag(flag(), 'u1', {})).toEqual({ enabled: true, reason: 'rollout' });
    expect(evaluateFlag(flag({ rollout_percentage: 0 }), 'u1', {})).toEqual({ enabled: false, reason: 'rollout' });
    expect(evaluateFlag(flag({ rollout_percentage: null }), 'u1', {})).toEqual({ enabled: true, reason: 'rollout' });
    expect(evaluateFlag(flag({ targeting_rules: { logical_operator: 'AND', groups: [] } }), 'u1', {})).toEqual({ enabled: true, reason: 'rollout' });
    const inside = userWithBucket('new-checkout', true, 30);
    const outside = userWithBucket('new-checkout', false, 30);
    expect(evaluateFlag(flag({ rollout_percentage: 30 }), inside, {})).toEqual({ enabled: true, reason: 'rollout' });
    expect(evaluateFlag(flag({ rollout_percentage: 30 }), outside, {})).toEqual({ enabled: false, reason: 'rollout' });
  });
  it('rules present: miss → targeting_miss; match → rollout check', () => {
    const f = flag({ targeting_rules: US, rollout_percentage: 30 });
    const inside = userWithBucket('new-checkout', true, 30);
    const outside = userWithBucket('new-checkout', false, 30);
    expect(evaluateFlag(f, inside, { country: 'FR' })).toEqual({ enabled: false, reason: 'targeting_miss' });
    expect(evaluateFlag(f, inside, {})).toEqual({ enabled: false, reason: 'targeting_miss' });
    expect(evaluateFlag(f, inside, { country: 'US' })).toEqual({ enabled: true, reason: 'targeting_match', rule: 'country equals US' });
    expect(evaluateFlag(f, outside, { user: { country: 'US' } })).toEqual({ enabled: false, reason: 'rollout', rule: 'country equals US' });
  });
  it('old-format rules are not evaluated and fail closed', () => {
    expect(evaluateFlag(flag({ targeting_rules: { country: 'US' } }), 'u1', { country: 'US' })).toEqual({ enabled: false, reason: 'targeting_miss' });
    expect(hasTargetingRules({ country: 'US' })).toBe(true);
    expect(hasTargetingRules(null)).toBe(false);
  });
  it('segment errors → error', () => {
    const rules = { logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'segment', operator: 'in_segment', value: 'seg_missing' }] }] };
    expect(evaluateFlag(flag({ targeting_rules: rules }), 'u1', {})).toEqual({ enabled: false, reason: 'error' });
    const invalid: EvaluationEnv = { segments: () => ({ kind: 'rules', rules: US, valid: false }) };
    expect(evaluateFlag(flag({ targeting_rules: rules }), 'u1', { country: 'US' }, invalid)).toEqual({ enabled: false, reason: 'error' });
  });
  it('id_list segments see the evaluated user id unless the context sets user_id', () => {
    const beta: CompiledSegment = { kind: 'id_list', has: (u) => u === 'u-beta' };
    const env: EvaluationEnv = { segments: (id) => (id === 'beta' ? beta : undefined) };
    const rules = { logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'segment', operator: 'in_segment', value: 'beta' }] }] };
    const f = flag({ targeting_rules: rules });
    expect(evaluateFlag(f, 'u-beta', {}, env)).toEqual({ enabled: true, reason: 'targeting_match', rule: 'segment in_segment beta' });
    expect(evaluateFlag(f, 'u-other', {}, env).reason).toBe('targeting_miss');
    expect(evaluateFlag(f, 'u-other', { user_id: 'u-beta' }, env).enabled).toBe(true);
  });
  it('the rule description is capped at 10 conditions', () => {
    const conditions = Array.from({ length: 12 }, (_, i) => ({ attribute: `a${i}`, operator: 'is_null' }));
    const res = evaluateFlag(flag({ targeting_rules: { logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions }] } }), 'u', {});
    expect(res.enabled).toBe(true);
    expect(res.rule?.split(', ')).toHaveLength(11);
    expect(res.rule?.endsWith(', …')).toBe(true);
  });
  it('property: never throws, always a valid reason; deterministic', () => {
    const reasons = ['disabled', 'targeting_match', 'targeting_miss', 'rollout', 'error'];
    fc.assert(
      fc.property(
        fc.record({
          key: fc.string(),
          is_active: fc.boolean(),
          status: fc.constantFrom('active', 'archived', 'draft'),
          rollout_percentage: fc.oneof(fc.double(), fc.constant(null)),
          targeting_rules: fc.oneof(fc.constant(US), fc.constant(null), fc.jsonValue()),
        }),
        fc.string(),
        fc.jsonValue(),
        (f, userId, ctx) => {
          const r = evaluateFlag(f, userId, ctx);
          expect(reasons).toContain(r.reason);
          expect(evaluateFlag(f, userId, ctx)).toEqual(r);
          if (r.enabled) expect(['targeting_match', 'rollout']).toContain(r.reason);
        },
      ),
      { numRuns: 300 },
    );
  });
});
