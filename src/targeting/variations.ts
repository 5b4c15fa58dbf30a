/**
 * Typed flags: a flag whose `value_type` is not `boolean` serves one of its variations (a value of that type).
 *
 * Which variation is served (the reference; compile-flag.ts compiles the same):
 *
 *  1. The flag answers `enabled` exactly as a boolean flag does (flag.ts: status, targeting rules, rollout).
 *  2. Off for the user (`enabled: false`, whatever the reason): `off_variation`, or none (the caller's default).
 *  3. On: the first variation rule whose targeting rules match serves its `variation`, or a pick of its `split`;
 *     else `variation_split` picks; else `default_variation`.
 *
 * - Variation rules see the context as the flag's targeting rules do (`user_id` = the user id unless the context has
 *   its own). A rule with no groups matches everyone; one in another shape, or one naming a segment that cannot be
 *   evaluated (SegmentError), does not match: the next rule decides.
 * - Splits are sticky: bucket = bucketFor(`split:<flag key>`, userId) (SPLIT_BUCKETING, its own version, beside the
 *   rollout's BUCKETING); weights (integer percentages summing to 100) become `weight * 100` buckets laid out in
 *   order from bucket 0. The salt differs from the rollout's `flag:<key>`, so who is rolled in and which variation
 *   they get are independent. Every split of a flag reads the same bucket.
 * - A definition naming an unknown variation (never stored by the service; possible in a hand-made SDK ruleset)
 *   serves none there.
 */
import { bucketFor, BUCKET_COUNT } from './hash.js';

export const VALUE_TYPES = ['boolean', 'string', 'number', 'json'] as const;
export type FlagValueType = (typeof VALUE_TYPES)[number];

export interface FlagVariation {
  key: string;
  value: unknown;
  name?: string;
  description?: string;
}

export interface SplitEntry {
  variation: string;
  weight: number;
}

export interface VariationRule {
  targeting_rules: unknown;
  variation?: string;
  split?: SplitEntry[];
}

/** How a typed flag chose the variation it serves: `off`, a rule's variation, a rule's split, the flag's split, the default. */
export type VariationReason = 'off' | 'rule' | 'rule_split' | 'split' | 'default';

/**
 * The hash of variation splits: bucketFor(`split:<flag key>`, userId) as hash.ts defines it (MurmurHash3 x86 32,
 * 10,000 buckets). A version of its own: a change to how splits map users is a new version, independent of the
 * rollout's BUCKETING. Golden vectors: test/vectors/typed-flags.json.
 */
export const SPLIT_BUCKETING = { name: 'murmur3_32_split', version: 1 } as const;

export const splitSalt = (flagKey: string): string => `split:${flagKey}`;

/** The split bucket of a user for a flag, in [0, 10000). */
export function splitBucket(flagKey: string, userId: string): number {
  return bucketFor(splitSalt(flagKey), userId);
}

/**
 * The exclusive upper bucket of each entry of `split`: weights laid out in order from bucket 0, `round(weight * 100)`
 * buckets each (a weight that is not a positive finite number gets none).
 */
export function splitUppers(split: readonly SplitEntry[]): Float64Array {
  const uppers = new Float64Array(split.length);
  let upper = 0;
  for (let i = 0; i < split.length; i++) {
    const w = split[i].weight;
    upper += typeof w === 'number' && Number.isFinite(w) && w > 0 ? Math.round(w * (BUCKET_COUNT / 100)) : 0;
    uppers[i] = upper;
  }
  return uppers;
}

/** The index in `split` whose bucket range holds `bucket`; -1 when the weights do not cover it. */
export function pickSplit(split: readonly SplitEntry[], bucket: number): number {
  const uppers = splitUppers(split);
  for (let i = 0; i < uppers.length; i++) if (bucket < uppers[i]) return i;
  return -1;
}

/** True when the definition is a typed flag: a non-boolean value type with variations. */
export function isTypedFlag(flag: { value_type?: unknown; variations?: unknown }): boolean {
  return typeof flag.value_type === 'string' && flag.value_type !== 'boolean' && Array.isArray(flag.variations) && flag.variations.length > 0;
}

// ---------------------------------------------------------------------------------------------------------------
// Validation of a typed flag's fields (the service answers each problem as a 422 at its place).

export const MAX_VARIATIONS = 50;
export const MIN_VARIATIONS = 2;
export const MAX_VARIATION_RULES = 50;
/** A json variation's value, serialised, and a string variation's value: at most this many UTF-8 bytes. */
export const MAX_VARIATION_VALUE_BYTES = 32 * 1024;

export const VARIATION_MESSAGES = {
  booleanHasNoVariations: 'boolean flags have no variations: set value_type to string, number or json',
  valueTypeFixed: 'value_type is fixed when the flag is created',
  variationsRequired: 'a flag of this value_type needs 2 to 50 variations',
  defaultRequired: 'a flag of this value_type needs default_variation or variation_split',
  defaultAndSplit: 'send default_variation or variation_split, not both',
  duplicateKey: 'variation keys must be unique in the flag',
  unknownVariation: 'names no variation of this flag',
  variationRemoved: 'a variation that default_variation, off_variation, a variation rule or a split names cannot be removed',
  wrongType: { string: 'value must be a string', number: 'value must be a finite number', json: 'value must be a JSON object or array' },
  valueTooLarge: 'value must be at most 32768 bytes as JSON',
  weightsSum: 'weights must be integers summing to 100',
  duplicateSplitVariation: 'a variation appears at most once in a split',
  ruleServesOne: 'a variation rule has either variation or split',
} as const;

export interface TypedFields {
  value_type: FlagValueType;
  variations: FlagVariation[] | null;
  default_variation: string | null;
  off_variation: string | null;
  variation_rules: VariationRule[] | null;
  variation_split: SplitEntry[] | null;
}

/** One problem: where (below the body) and what. `field` is the top-level field the problem is about. */
export interface VariationProblem {
  loc: Array<string | number>;
  msg: string;
}

const utf8Bytes = (text: string) => new TextEncoder().encode(text).length;

function valueProblem(type: FlagValueType, value: unknown): string | null {
  if (type === 'string') {
    if (typeof value !== 'string') return VARIATION_MESSAGES.wrongType.string;
    return utf8Bytes(JSON.stringify(value)) > MAX_VARIATION_VALUE_BYTES ? VARIATION_MESSAGES.valueTooLarge : null;
  }
  if (type === 'number') return typeof value === 'number' && Number.isFinite(value) ? null : VARIATION_MESSAGES.wrongType.number;
  if (type === 'json') {
    if (typeof value !== 'object' || value === null) return VARIATION_MESSAGES.wrongType.json;
    return utf8Bytes(JSON.stringify(value)) > MAX_VARIATION_VALUE_BYTES ? VARIATION_MESSAGES.valueTooLarge : null;
  }
  return null;
}

/**
 * The problems of a typed flag's fields, as stored after the change (`fields`), in field order. Shape (types,
 * lengths, key pattern) is the schema's job; this checks what the schema cannot: values of the flag's type, unique
 * keys, names of existing variations, weights summing to 100. Targeting rules of variation rules are checked by the
 * caller (validateRuleSet). Boolean flags must carry none of the typed fields.
 */
export function validateTypedFields(fields: TypedFields): VariationProblem[] {
  const problems: VariationProblem[] = [];
  const { value_type: type } = fields;
  if (type === 'boolean') {
    for (const field of ['variations', 'default_variation', 'off_variation', 'variation_rules', 'variation_split'] as const) {
      if (fields[field] !== null) problems.push({ loc: [field], msg: VARIATION_MESSAGES.booleanHasNoVariations });
    }
    return problems;
  }
  const variations = fields.variations ?? [];
  if (variations.length < MIN_VARIATIONS || variations.length > MAX_VARIATIONS) problems.push({ loc: ['variations'], msg: VARIATION_MESSAGES.variationsRequired });
  const keys = new Set<string>();
  variations.forEach((v, i) => {
    if (keys.has(v.key)) problems.push({ loc: ['variations', i, 'key'], msg: VARIATION_MESSAGES.duplicateKey });
    keys.add(v.key);
    const problem = valueProblem(type, v.value);
    if (problem) problems.push({ loc: ['variations', i, 'value'], msg: problem });
  });
  const known = (key: string | undefined | null, loc: Array<string | number>) => {
    if (typeof key === 'string' && !keys.has(key)) problems.push({ loc, msg: VARIATION_MESSAGES.unknownVariation });
  };
  const checkSplit = (split: readonly SplitEntry[], loc: Array<string | number>) => {
    const seen = new Set<string>();
    split.forEach((entry, j) => {
      known(entry.variation, [...loc, j, 'variation']);
      if (seen.has(entry.variation)) problems.push({ loc: [...loc, j, 'variation'], msg: VARIATION_MESSAGES.duplicateSplitVariation });
      seen.add(entry.variation);
    });
    const total = split.reduce((sum, e) => sum + e.weight, 0);
    if (!split.every((e) => Number.isInteger(e.weight)) || total !== 100) problems.push({ loc, msg: VARIATION_MESSAGES.weightsSum });
  };
  if (fields.default_variation !== null && fields.variation_split !== null) problems.push({ loc: ['variation_split'], msg: VARIATION_MESSAGES.defaultAndSplit });
  else if (fields.default_variation === null && fields.variation_split === null) problems.push({ loc: ['default_variation'], msg: VARIATION_MESSAGES.defaultRequired });
  known(fields.default_variation, ['default_variation']);
  known(fields.off_variation, ['off_variation']);
  (fields.variation_rules ?? []).forEach((rule, i) => {
    const hasVariation = rule.variation !== undefined;
    const hasSplit = rule.split !== undefined;
    if (hasVariation === hasSplit) problems.push({ loc: ['variation_rules', i], msg: VARIATION_MESSAGES.ruleServesOne });
    known(rule.variation, ['variation_rules', i, 'variation']);
    if (hasSplit) checkSplit(rule.split!, ['variation_rules', i, 'split']);
  });
  if (fields.variation_split !== null) checkSplit(fields.variation_split, ['variation_split']);
  return problems;
}
