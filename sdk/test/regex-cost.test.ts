import { describe, expect, it } from 'vitest';
import { Uplift } from '../src/index.js';
import type { Ruleset } from '../src/types.js';

// Issue #27: the SDK bundles src/targeting, so a ruleset evaluated locally has the server's regex cost bounds.
const condition = (attribute: string, operator: string, value?: unknown) => ({ attribute, operator, value });
const rules = (conditions: object[], logical_operator = 'AND') => ({ logical_operator, groups: [{ logical_operator, conditions }] });
const regexes = (n: number) => Array.from({ length: n }, () => condition('email', 'regex', '@example\\.com$'));
const SEGMENT = '00000000-0000-4000-8000-0000000000b1';
const flags: Array<[string, unknown]> = [
  ['not-example', rules([condition('email', 'not_regex', '@example\\.com$')])],
  ['issue-pattern', rules([condition('bio', 'not_regex', '(?i)(?:(\\w+)\\s?){1,999}#')])],
  ['eleven-regexes', rules(regexes(11), 'OR')],
  ['through-segment', rules([condition('segment', 'in_segment', SEGMENT), ...regexes(5)], 'OR')],
];
const bootstrap: Ruleset = {
  bucketing: { name: 'murmur3_32', version: 1 },
  flags: flags.map(([key, targeting_rules], i) => ({
    id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    key, status: 'active', is_active: true, rollout_percentage: 100, targeting_rules, default_value: false,
  })) as Ruleset['flags'],
  segments: [{ id: SEGMENT, kind: 'rules', status: 'active', rules: rules(regexes(6), 'OR'), valid: true }],
};
const client = new Uplift({ baseUrl: 'http://uplift.invalid', apiKey: 'k', bootstrap, updates: 'off', fetch: () => Promise.reject(new Error('offline')) });

describe('regex cost bounds on @uplift/sdk', () => {
  it('a context value longer than a search may read is a non-match, for not_regex too', () => {
    expect(client.evaluate('not-example', 'u1', { email: 'someone@other.org' })).toEqual({ enabled: true, reason: 'targeting_match', rule: 'email not_regex @example\\.com$' });
    expect(client.evaluate('not-example', 'u1', { email: `${'x'.repeat(2_000)}@other.org` })).toEqual({ enabled: false, reason: 'targeting_miss' });
  });
  it("a pattern over the program size never runs: the issue's pattern is a non-match at once", () => {
    expect(client.evaluate('issue-pattern', 'u1', { bio: 'word '.repeat(1_600) })).toEqual({ enabled: false, reason: 'targeting_miss' });
  });
  it('rules reaching more than 10 regex conditions, through segments too, answer error', () => {
    expect(client.evaluate('eleven-regexes', 'u1', { email: 'a@example.com' })).toEqual({ enabled: false, reason: 'error' });
    expect(client.evaluate('through-segment', 'u1', { email: 'a@example.com' })).toEqual({ enabled: false, reason: 'error' });
    expect(client.isEnabled('through-segment', 'u1', { email: 'a@example.com' })).toBe(false);
  });
});
