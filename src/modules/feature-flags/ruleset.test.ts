import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { userFlagsJsonWriter } from './ruleset.js';

describe('userFlagsJsonWriter', () => {
  it('writes the key map as JSON, in ruleset order, any keys', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.oneof(fc.string(), fc.constantFrom('__proto__', 'constructor', 'a"b\\c', '\u2028', '\ud800')), { maxLength: 60 }), fc.array(fc.boolean(), { minLength: 60, maxLength: 60 }), (keys, on) => {
        const json = userFlagsJsonWriter(keys)(on);
        expect(json).toBe(`{${keys.map((key, i) => `${JSON.stringify(key)}:${on[i]}`).join(',')}}`);
        // JSON.parse keeps every key as an own property (`__proto__` included); objects order integer-like keys first.
        const byKey = (a: [string, unknown], b: [string, unknown]) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);
        expect(Object.entries(JSON.parse(json)).sort(byKey)).toEqual(keys.map((key, i): [string, boolean] => [key, on[i]]).sort(byKey));
      }),
      { numRuns: 500 },
    );
  });

  it('an empty ruleset answers an empty object', () => {
    expect(userFlagsJsonWriter([])([])).toBe('{}');
  });
});
