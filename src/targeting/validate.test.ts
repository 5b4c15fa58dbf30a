import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  collectSegmentIds,
  isRuleSetShape,
  RULE_MESSAGES,
  SEGMENT_RULE_MESSAGES,
  validateRuleSet,
  validateSegmentRules,
} from './validate.js';

const c = (attribute: string, operator: string, value?: unknown) => ({ attribute, operator, value });
const rs = (groups: unknown[], logical_operator: unknown = 'AND') => ({ logical_operator, groups });
const g = (conditions: unknown[], logical_operator: unknown = 'AND') => ({ logical_operator, conditions });

describe('validateRuleSet (flags / experiments)', () => {
  it('accepts well-formed rules, empty ones and negate flags', () => {
    expect(validateRuleSet(rs([]))).toBeNull();
    expect(validateRuleSet(rs([g([c('country', 'equals', 'US')])]))).toBeNull();
    expect(
      validateRuleSet({
        logical_operator: 'OR',
        negate: true,
        groups: [
          { ...g([{ ...c('country', 'in', ['US', 'CA']), negate: true, id: 'ui-id' }]), negate: false },
          g([c('segment', 'in_segment', 'seg_1'), c('beta', 'is_null'), c('v', 'semver_gte', '1.2.0'), c('d', 'before', '2024-01-01')], 'OR'),
        ],
      }),
    ).toBeNull();
  });
  it('reports shape problems with fixed messages', () => {
    expect(validateRuleSet(null)).toBe(RULE_MESSAGES.notObject);
    expect(validateRuleSet([])).toBe(RULE_MESSAGES.notObject);
    expect(validateRuleSet({ logical_operator: 'XOR', groups: [] })).toBe(RULE_MESSAGES.logicalOperator);
    expect(validateRuleSet({ logical_operator: 'AND' })).toBe(RULE_MESSAGES.groups);
    expect(validateRuleSet({ ...rs([]), negate: 'yes' })).toBe(RULE_MESSAGES.negate);
    expect(validateRuleSet(rs([{ conditions: [] }]))).toBe(RULE_MESSAGES.group);
    expect(validateRuleSet(rs([g('x' as unknown as unknown[])]))).toBe(RULE_MESSAGES.group);
    expect(validateRuleSet(rs([g([{ operator: 'equals', value: 'x' }])]))).toBe(RULE_MESSAGES.condition);
    expect(validateRuleSet(rs([g([c('', 'equals', 'x')])]))).toBe(RULE_MESSAGES.attribute);
    expect(validateRuleSet(rs([g([c('a'.repeat(257), 'equals', 'x')])]))).toBe(RULE_MESSAGES.attribute);
    expect(validateRuleSet(rs([g([c('a', 'sounds_like', 'x')])]))).toBe(RULE_MESSAGES.unknownOperator);
    expect(validateRuleSet(rs([g([c('a', 'in', 'US')])]))).toBe(RULE_MESSAGES.value);
    expect(validateRuleSet(rs([g([c('a', 'regex', '(')])]))).toBe(RULE_MESSAGES.value);
    expect(validateRuleSet(rs([g([c('a', 'in_segment', '')])]))).toBe(RULE_MESSAGES.value);
  });
  it('limits groups + conditions to 1000', () => {
    const cond = c('a', 'equals', 1);
    expect(validateRuleSet(rs([g(Array.from({ length: 999 }, () => cond))]))).toBeNull();
    expect(validateRuleSet(rs([g(Array.from({ length: 1000 }, () => cond))]))).toBe(RULE_MESSAGES.tooManyNodes);
    expect(validateRuleSet(rs(Array.from({ length: 500 }, () => g([cond]))))).toBeNull();
    expect(validateRuleSet(rs(Array.from({ length: 501 }, () => g([cond]))))).toBe(RULE_MESSAGES.tooManyNodes);
    expect(validateRuleSet(rs(Array.from({ length: 1001 }, () => g([]))))).toBe(RULE_MESSAGES.tooManyNodes);
    expect(RULE_MESSAGES.tooManyNodes).toBe('targeting rules: at most 1000 groups and conditions are allowed');
  });
  it('limits distinct segments to 10 (repeats count once)', () => {
    const segs = (n: number) => Array.from({ length: n }, (_, i) => c('segment', i % 2 ? 'in_segment' : 'not_in_segment', `s${i}`));
    expect(validateRuleSet(rs([g([...segs(10), ...segs(10)])]))).toBeNull();
    expect(validateRuleSet(rs([g(segs(11))]))).toBe(RULE_MESSAGES.tooManySegments);
  });
  it('never echoes submitted values', () => {
    fc.assert(
      fc.property(fc.anything(), (v) => {
        const msg = validateRuleSet(v);
        if (msg !== null) expect(Object.values(RULE_MESSAGES)).toContain(msg);
      }),
    );
  });
});

describe('validateSegmentRules', () => {
  const ok = c('country', 'equals', 'US');
  it('accepts a normal segment', () => {
    expect(validateSegmentRules(rs([g([ok, c('plan', 'in', ['pro'])])]))).toBeNull();
  });
  it('needs at least one group and one condition per group', () => {
    expect(validateSegmentRules(rs([]))).toBe(SEGMENT_RULE_MESSAGES.noGroups);
    expect(validateSegmentRules(rs([g([ok]), g([])]))).toBe(SEGMENT_RULE_MESSAGES.emptyGroup);
    expect(SEGMENT_RULE_MESSAGES.noGroups).toBe('Segment rules must have at least one group');
  });
  it('limits groups, conditions, regexes, list values', () => {
    expect(validateSegmentRules(rs(Array.from({ length: 20 }, () => g([ok]))))).toBeNull();
    expect(validateSegmentRules(rs(Array.from({ length: 21 }, () => g([ok]))))).toBe(SEGMENT_RULE_MESSAGES.tooManyGroups);
    expect(validateSegmentRules(rs([g(Array.from({ length: 50 }, () => ok))]))).toBeNull();
    expect(validateSegmentRules(rs([g(Array.from({ length: 30 }, () => ok)), g(Array.from({ length: 21 }, () => ok))]))).toBe(
      SEGMENT_RULE_MESSAGES.tooManyConditions,
    );
    const re = (n: number) => Array.from({ length: n }, (_, i) => c('email', i % 2 ? 'regex' : 'not_regex', `^u${i}`));
    expect(validateSegmentRules(rs([g(re(10))]))).toBeNull();
    expect(validateSegmentRules(rs([g(re(11))]))).toBe(SEGMENT_RULE_MESSAGES.tooManyRegex);
    const list = (n: number) => Array.from({ length: n }, (_, i) => `v${i}`);
    expect(validateSegmentRules(rs([g([c('a', 'in', list(600)), c('b', 'not_in', list(400))])]))).toBeNull();
    expect(validateSegmentRules(rs([g([c('a', 'in', list(600)), c('b', 'not_in', list(401))])]))).toBe(SEGMENT_RULE_MESSAGES.tooManyListValues);
  });
  it('rejects segment operators and unknown operators', () => {
    expect(validateSegmentRules(rs([g([c('segment', 'in_segment', 's1')])]))).toBe(SEGMENT_RULE_MESSAGES.segmentOperator);
    expect(validateSegmentRules(rs([g([c('segment', 'not_in_segment', 's1')])]))).toBe(SEGMENT_RULE_MESSAGES.segmentOperator);
    expect(validateSegmentRules(rs([g([c('a', 'nope', 's1')])]))).toBe(SEGMENT_RULE_MESSAGES.unknownOperator);
    expect(validateSegmentRules(rs([g([c('a', 'gt', 'abc')])]))).toBe(SEGMENT_RULE_MESSAGES.value);
    expect(validateSegmentRules('x')).toBe(SEGMENT_RULE_MESSAGES.notObject);
  });
  it('only ever returns a fixed message', () => {
    fc.assert(
      fc.property(fc.anything(), (v) => {
        const msg = validateSegmentRules(v);
        if (msg !== null) expect(Object.values(SEGMENT_RULE_MESSAGES)).toContain(msg);
      }),
    );
  });
});

describe('isRuleSetShape / collectSegmentIds', () => {
  it('recognises the current format only', () => {
    expect(isRuleSetShape(rs([g([ok()])]))).toBe(true);
    expect(isRuleSetShape(rs([]))).toBe(true);
    expect(isRuleSetShape({ country: 'US' })).toBe(false);
    expect(isRuleSetShape([{ attribute: 'a', operator: 'equals', value: 1 }])).toBe(false);
    expect(isRuleSetShape(rs([g([{ attribute: 'a' }])]))).toBe(false);
    expect(isRuleSetShape(rs([g([ok()])], 'and'))).toBe(false);
    expect(isRuleSetShape(null)).toBe(false);
    function ok() {
      return c('a', 'whatever-op', 1);
    }
  });
  it('collects distinct segment ids in order, tolerating junk', () => {
    const r = rs([
      g([c('segment', 'in_segment', 'b'), c('segment', 'not_in_segment', 'a'), c('x', 'equals', 'c')]),
      g([c('segment', 'in_segment', 'b'), c('segment', 'in_segment', 5), null]),
      'junk',
    ]);
    expect(collectSegmentIds(r)).toEqual(['b', 'a']);
    expect(collectSegmentIds(null)).toEqual([]);
  });
});
