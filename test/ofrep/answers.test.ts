import { describe, expect, it } from 'vitest';
import { needsTargetingKey, ofrepAnswer, type OfrepFlagFacts } from '../../src/modules/ofrep/answers.js';
import type { FlagEvaluation } from '../../src/targeting/index.js';

const flag = (facts: Partial<OfrepFlagFacts> = {}): OfrepFlagFacts => ({ rolloutPercentage: 100, hasRules: false, typed: false, hasSplits: false, hasVariationRules: false, ...facts });
const ev = (e: FlagEvaluation) => e;

describe('Uplift outcomes as OFREP answers', () => {
  it('maps every boolean outcome to value, variant and an OpenFeature reason', () => {
    expect(ofrepAnswer(flag(), ev({ enabled: false, reason: 'disabled' }))).toEqual({ value: false, variant: 'off', reason: 'DISABLED' });
    expect(ofrepAnswer(flag(), ev({ enabled: true, reason: 'rollout' }))).toEqual({ value: true, variant: 'on', reason: 'STATIC' });
    expect(ofrepAnswer(flag({ rolloutPercentage: 0 }), ev({ enabled: false, reason: 'rollout' }))).toEqual({ value: false, variant: 'off', reason: 'STATIC' });
    expect(ofrepAnswer(flag({ rolloutPercentage: 30 }), ev({ enabled: true, reason: 'rollout' }))).toMatchObject({ value: true, reason: 'SPLIT' });
    expect(ofrepAnswer(flag({ hasRules: true }), ev({ enabled: true, reason: 'targeting_match' }))).toMatchObject({ reason: 'TARGETING_MATCH' });
    expect(ofrepAnswer(flag({ hasRules: true, rolloutPercentage: 30 }), ev({ enabled: true, reason: 'targeting_match' }))).toMatchObject({ reason: 'SPLIT' });
    expect(ofrepAnswer(flag({ hasRules: true, rolloutPercentage: 30 }), ev({ enabled: false, reason: 'rollout' }))).toMatchObject({ value: false, reason: 'SPLIT' });
    expect(ofrepAnswer(flag({ hasRules: true }), ev({ enabled: false, reason: 'targeting_miss' }))).toEqual({ value: false, variant: 'off', reason: 'DEFAULT' });
    expect(ofrepAnswer(flag(), ev({ enabled: false, reason: 'error' }))).toEqual({ errorCode: 'GENERAL', errorDetails: 'The flag names a segment that cannot be evaluated' });
  });

  it('answers a typed flag with the variation served, or no value (the code default) when none is', () => {
    const typed = flag({ typed: true, hasRules: true });
    expect(ofrepAnswer(typed, ev({ enabled: true, reason: 'targeting_match', variation: 'blue', value: '#00f', variation_reason: 'rule' })))
      .toEqual({ value: '#00f', variant: 'blue', reason: 'TARGETING_MATCH' });
    expect(ofrepAnswer(typed, ev({ enabled: true, reason: 'targeting_match', variation: 'b', value: 2, variation_reason: 'split' }))).toMatchObject({ value: 2, reason: 'SPLIT' });
    expect(ofrepAnswer(typed, ev({ enabled: true, reason: 'targeting_match', variation: 'b', value: { a: 1 }, variation_reason: 'rule_split' }))).toMatchObject({ reason: 'SPLIT' });
    expect(ofrepAnswer(flag({ typed: true }), ev({ enabled: true, reason: 'rollout', variation: 'd', value: 'x', variation_reason: 'default' }))).toEqual({ value: 'x', variant: 'd', reason: 'STATIC' });
    expect(ofrepAnswer(typed, ev({ enabled: false, reason: 'targeting_miss', variation: 'off', value: 'none', variation_reason: 'off' }))).toEqual({ value: 'none', variant: 'off', reason: 'DEFAULT' });
    expect(ofrepAnswer(typed, ev({ enabled: false, reason: 'disabled', variation_reason: 'off' }))).toEqual({ reason: 'DISABLED' });
    // The default variation when variation rules exist and none matched: OpenFeature's DEFAULT.
    const ruled = flag({ typed: true, hasVariationRules: true });
    expect(ofrepAnswer(ruled, ev({ enabled: true, reason: 'rollout', variation: 'd', value: 0, variation_reason: 'default' }))).toEqual({ value: 0, variant: 'd', reason: 'DEFAULT' });
  });

  it('needs targetingKey only where bucketing or id-list membership decides', () => {
    const active = { isActive: true, idListSegments: 0 };
    expect(needsTargetingKey({ ...flag(), ...active })).toBe(false);
    expect(needsTargetingKey({ ...flag({ hasRules: true }), ...active })).toBe(false);
    expect(needsTargetingKey({ ...flag({ rolloutPercentage: 50 }), ...active })).toBe(true);
    expect(needsTargetingKey({ ...flag({ rolloutPercentage: 50 }), ...active, isActive: false })).toBe(false);
    expect(needsTargetingKey({ ...flag({ typed: true, hasSplits: true }), ...active })).toBe(true);
    expect(needsTargetingKey({ ...flag(), ...active, idListSegments: 1 })).toBe(true);
  });
});
