import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileFlagSet } from './compile-flag.js';
import { ruleSetEvaluator } from './compile.js';
import { arbAnyRules, arbEnv, arbObject, arbUserId, outcome } from './compile.arbitraries.js';
import { evaluateRuleSet } from './evaluate.js';
import { describeRule, hasTargetingRules } from './flag.js';
import { isRuleSetShape } from './validate.js';

// One rule semantics: the server evaluates rule sets through the compiler only. Experiment targeting (tracking),
// segment membership, bulk evaluation and preview (segments) use ruleSetEvaluator; flags (service and SDK) use
// compileFlagSet. For any rules, context and segment table they must answer alike, and as the interpreted reference.

const arbObjectContext = arbObject.map((json) => JSON.parse(json) as Record<string, unknown>);

describe('the rule-set entry points agree', () => {
  it('experiment targeting, segment evaluation and a 100% flag with the same rules give one answer', () => {
    fc.assert(
      fc.property(arbAnyRules, arbObjectContext, arbUserId, arbEnv, (rules, attributes, userId, env) => {
        // As tracking and the flags build it: the user id, unless the context sets its own user_id.
        const context = { user_id: userId, ...attributes };
        const evaluator = ruleSetEvaluator(rules);
        // Compiled once per rules object.
        if (typeof rules === 'object' && rules !== null) expect(ruleSetEvaluator(rules)).toBe(evaluator);
        const evaluated = outcome(() => evaluator.evaluate(context, env));
        const explained = outcome(() => evaluator.explain(context, env));
        expect(evaluated).toEqual(outcome(() => evaluateRuleSet(rules, context, env)));
        const flag = { key: 'k', is_active: true, status: 'active', rollout_percentage: 100, targeting_rules: rules };
        const answer = compileFlagSet([flag]).flags[0].explain(userId, attributes, env);
        if (!hasTargetingRules(rules)) {
          // A flag without targeting rules (none, or no groups, even negated) is decided by its rollout alone
          // (flag.ts, decision table): at 100%, on; such rules name no segment, so they evaluate without error.
          expect(answer).toEqual({ enabled: true, reason: 'rollout' });
          expect(evaluated).toHaveProperty('value');
          return;
        }
        if (!isRuleSetShape(rules)) {
          // Rules in no known format (old stored rules) match nobody: the flag does not evaluate them.
          expect(answer).toEqual({ enabled: false, reason: 'targeting_miss' });
          expect(evaluated).not.toEqual({ value: true });
          return;
        }
        if (!('value' in evaluated)) {
          // A missing or invalid segment, or too many regexes: every entry point refuses, the flag answers `error`.
          expect(explained).toEqual(evaluated);
          expect(answer).toEqual({ enabled: false, reason: 'error' });
          return;
        }
        if (!('value' in explained)) {
          // Explaining reads every condition: an id list that fails to answer, skipped by a short circuit, is read.
          // The flag explains too, so it answers `error`.
          expect(answer).toEqual({ enabled: false, reason: 'error' });
          return;
        }
        expect(explained.value.matched).toBe(evaluated.value);
        expect(answer.enabled).toBe(evaluated.value);
        expect(answer.reason).toBe(evaluated.value ? 'targeting_match' : 'targeting_miss');
        const conditions = explained.value.matchedConditions;
        if (evaluated.value) expect(answer.rule).toBe(conditions.length > 0 ? describeRule(conditions) : undefined);
      }),
      { numRuns: 1500 },
    );
  });

  it('a rule set evaluated again, for other contexts, answers each as if compiled afresh', () => {
    fc.assert(
      fc.property(arbAnyRules, fc.array(arbObjectContext, { minLength: 2, maxLength: 4 }), arbEnv, (rules, contexts, env) => {
        for (const context of contexts) {
          expect(outcome(() => ruleSetEvaluator(rules).explain(context, env))).toEqual(outcome(() => ruleSetEvaluator(structuredClone(rules)).explain(context, env)));
        }
      }),
      { numRuns: 500 },
    );
  });
});
