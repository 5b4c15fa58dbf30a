import {
  MAX_VARIATION_RULES,
  MAX_VARIATION_VALUE_BYTES,
  MAX_VARIATIONS,
  MIN_VARIATIONS,
  VARIATION_MESSAGES,
  validateTypedFields,
  type FlagValueType,
  type SplitEntry,
} from '../../../../src/targeting/variations';
import { emptyRules, fromRules, toRules, type RulesDraft, type TargetingRules } from '../../components/rule-builder';
import type { Flag } from './hooks';

/**
 * The typed fields of a flag as the editor holds them: values as the inputs hold them (text), and every place that
 * names a variation (default, off, splits, rules) pointing at the variation's draft id, so renaming a key renames it
 * everywhere and removing a variation can tell where it is still served. `typedFields` turns it into the API's
 * fields, and `typedProblems` checks it with the server's own rules (src/targeting/variations.ts) plus what only the
 * inputs can get wrong (JSON that does not parse, a weight that is not a whole number).
 */
export type ValueType = FlagValueType;
export { MAX_VARIATIONS, MIN_VARIATIONS, MAX_VARIATION_RULES };

export const VALUE_TYPE_OPTIONS: ReadonlyArray<readonly [ValueType, string]> = [
  ['boolean', 'Boolean (on or off)'],
  ['string', 'String'],
  ['number', 'Number'],
  ['json', 'JSON (object or array)'],
];

export interface VariationDraft {
  id: number;
  key: string;
  value: string;
  name: string;
  description: string;
}
/** One share of a split; `variation` is a draft id, null until one is chosen. */
export interface SplitDraft {
  variation: number | null;
  weight: string;
}
export interface VariationRuleDraft {
  rules: RulesDraft;
  serve: 'variation' | 'split';
  variation: number | null;
  split: SplitDraft[];
}
export interface TypedDraft {
  valueType: ValueType;
  variations: VariationDraft[];
  nextId: number;
  /** What a user for whom the flag is on gets when no variation rule matches: default_variation or variation_split. */
  serve: 'default' | 'split';
  defaultVariation: number | null;
  split: SplitDraft[];
  offVariation: number | null;
  rules: VariationRuleDraft[];
}

const KEY_PATTERN = /^[A-Za-z0-9_.:-]+$/;

function defaultValueText(type: ValueType, index: number): string {
  if (type === 'number') return String(index);
  if (type === 'json') return '{}';
  return '';
}

/** Whole-number weights that add up to exactly 100 (the remainder goes to the first shares). */
export function evenWeights(count: number): string[] {
  const base = Math.floor(100 / count);
  return Array.from({ length: count }, (_, i) => String(base + (i < 100 - base * count ? 1 : 0)));
}

export function splitTotal(split: readonly SplitDraft[]): number {
  return split.reduce((sum, s) => sum + (Number(s.weight) || 0), 0);
}

export function newTypedDraft(valueType: ValueType): TypedDraft {
  const variations = [0, 1].map((id) => ({ id, key: `variation-${id + 1}`, value: defaultValueText(valueType, id), name: '', description: '' }));
  return {
    valueType,
    variations,
    nextId: variations.length,
    serve: 'default',
    defaultVariation: 0,
    split: variations.map((v, i) => ({ variation: v.id, weight: evenWeights(variations.length)[i] })),
    offVariation: null,
    rules: [],
  };
}

/** A new flag's draft under another value type: values still holding the old type's starting value get the new one's. */
export function withValueType(draft: TypedDraft, valueType: ValueType): TypedDraft {
  return {
    ...draft,
    valueType,
    variations: draft.variations.map((v, i) => (v.value === defaultValueText(draft.valueType, i) ? { ...v, value: defaultValueText(valueType, i) } : v)),
  };
}

export function addVariation(draft: TypedDraft): TypedDraft {
  const id = draft.nextId;
  const index = draft.variations.length;
  const variation = { id, key: `variation-${index + 1}`, value: defaultValueText(draft.valueType, index), name: '', description: '' };
  return { ...draft, variations: [...draft.variations, variation], nextId: id + 1 };
}

/** Where a variation is still served, in words ("the default variation", "variation rule 2"); empty when nowhere. */
export function variationUses(draft: TypedDraft, id: number): string[] {
  const uses: string[] = [];
  if (draft.serve === 'default' && draft.defaultVariation === id) uses.push('the default variation');
  if (draft.serve === 'split' && draft.split.some((s) => s.variation === id)) uses.push('the default split');
  if (draft.offVariation === id) uses.push('the off variation');
  draft.rules.forEach((rule, i) => {
    if (rule.serve === 'variation' ? rule.variation === id : rule.split.some((s) => s.variation === id)) uses.push(`variation rule ${i + 1}`);
  });
  return uses;
}

const list = (items: string[]) => (items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`);

/** The draft without the variation, or why it cannot go: a variation something still serves stays (the server refuses it too). */
export function removeVariation(draft: TypedDraft, id: number): { draft: TypedDraft } | { refused: string } {
  const uses = variationUses(draft, id);
  if (uses.length > 0) {
    const key = draft.variations.find((v) => v.id === id)?.key ?? '';
    return { refused: `“${key}” is still served by ${list(uses)}: serve another variation there before removing it.` };
  }
  // Shares of splits not in use (kept for when the user switches back) drop it too.
  const keep = (split: SplitDraft[]) => split.filter((s) => s.variation !== id);
  return {
    draft: {
      ...draft,
      variations: draft.variations.filter((v) => v.id !== id),
      split: keep(draft.split),
      rules: draft.rules.map((rule) => ({ ...rule, split: keep(rule.split) })),
    },
  };
}

/** A stored value as its input shows it. */
export function valueText(type: ValueType, value: unknown): string {
  if (type === 'json') return JSON.stringify(value, null, 2);
  if (type === 'number') return String(value);
  return typeof value === 'string' ? value : JSON.stringify(value);
}

const utf8Bytes = (text: string) => new TextEncoder().encode(text).length;

/** The value an input's text stands for under the flag's type, or what is wrong with it, in words. */
export function parseValue(type: ValueType, text: string): { value: unknown } | { problem: string } {
  if (type === 'number') {
    const n = Number(text.trim());
    return text.trim() === '' || !Number.isFinite(n) ? { problem: 'Enter a number, for example 42 or 0.5.' } : { value: n };
  }
  if (type !== 'json') {
    const bytes = utf8Bytes(JSON.stringify(text));
    return bytes > MAX_VARIATION_VALUE_BYTES ? { problem: `At most 32 KiB (${MAX_VARIATION_VALUE_BYTES} bytes); this value is ${bytes} bytes.` } : { value: text };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { problem: `This is not valid JSON: ${(error as Error).message}.` };
  }
  if (typeof value !== 'object' || value === null) {
    return { problem: 'A JSON value must be an object or an array, for example {"color": "blue"} or ["a", "b"].' };
  }
  const bytes = utf8Bytes(JSON.stringify(value));
  if (bytes > MAX_VARIATION_VALUE_BYTES) return { problem: `At most 32 KiB (${MAX_VARIATION_VALUE_BYTES} bytes) as JSON; this value is ${bytes} bytes.` };
  return { value };
}

export function fromFlag(flag: Flag): TypedDraft | null {
  const valueType = flag.value_type ?? 'boolean';
  if (valueType === 'boolean' || !flag.variations) return null;
  const variations = flag.variations.map((v, id) => ({ id, key: v.key, value: valueText(valueType, v.value), name: v.name ?? '', description: v.description ?? '' }));
  const idOf = (key: string | null | undefined) => (key === null || key === undefined ? null : (variations.find((v) => v.key === key)?.id ?? null));
  const splitOf = (split: SplitEntry[] | null | undefined): SplitDraft[] => (split ?? []).map((s) => ({ variation: idOf(s.variation), weight: String(s.weight) }));
  const split = splitOf(flag.variation_split);
  return {
    valueType,
    variations,
    nextId: variations.length,
    serve: flag.variation_split ? 'split' : 'default',
    defaultVariation: idOf(flag.default_variation),
    split: split.length > 0 ? split : variations.map((v, i) => ({ variation: v.id, weight: evenWeights(variations.length)[i] })),
    offVariation: idOf(flag.off_variation),
    rules: (flag.variation_rules ?? []).map((rule) => ({
      rules: fromRules(rule.targeting_rules),
      serve: rule.split ? 'split' : 'variation',
      variation: idOf(rule.variation),
      split: rule.split ? splitOf(rule.split) : [],
    })),
  };
}

export interface TypedFieldsBody {
  variations: Array<{ key: string; value: unknown; name?: string; description?: string }>;
  default_variation?: string;
  variation_split?: SplitEntry[];
  off_variation: string | null;
  variation_rules: Array<{ targeting_rules: TargetingRules; variation?: string; split?: SplitEntry[] }>;
}

/** The API's typed fields of the draft (values that do not parse are left undefined: typedProblems reports them). */
export function typedFields(draft: TypedDraft): TypedFieldsBody {
  const keyOf = (id: number | null) => draft.variations.find((v) => v.id === id)?.key ?? '';
  const split = (shares: SplitDraft[]) => shares.map((s) => ({ variation: keyOf(s.variation), weight: Number(s.weight) }));
  return {
    variations: draft.variations.map((v) => {
      const parsed = parseValue(draft.valueType, v.value);
      return {
        key: v.key.trim(),
        value: 'value' in parsed ? parsed.value : undefined,
        ...(v.name.trim() ? { name: v.name.trim() } : {}),
        ...(v.description.trim() ? { description: v.description.trim() } : {}),
      };
    }),
    ...(draft.serve === 'default' ? { default_variation: keyOf(draft.defaultVariation) } : { variation_split: split(draft.split) }),
    off_variation: draft.offVariation === null ? null : keyOf(draft.offVariation),
    variation_rules: draft.rules.map((rule) => ({
      // No groups: the rule matches every user.
      targeting_rules: toRules(rule.rules) ?? emptyRules(),
      ...(rule.serve === 'variation' ? { variation: keyOf(rule.variation) } : { split: split(rule.split) }),
    })),
  };
}

const sentence = (msg: string) => `${msg.charAt(0).toUpperCase()}${msg.slice(1)}.`;

/**
 * Every problem of the draft, by the path the server's 422 would name (`variations.1.value`,
 * `variation_rules.0.split`), so local and server messages land at the same field.
 */
export function typedProblems(draft: TypedDraft): Record<string, string> {
  const problems: Record<string, string> = {};
  const add = (path: string, msg: string) => {
    problems[path] ??= msg;
  };
  draft.variations.forEach((v, i) => {
    const key = v.key.trim();
    if (!key) add(`variations.${i}.key`, 'Enter a key.');
    else if (!KEY_PATTERN.test(key) || key.length > 255) add(`variations.${i}.key`, 'Use at most 255 letters, digits and _ . : - only.');
    const parsed = parseValue(draft.valueType, v.value);
    if ('problem' in parsed) add(`variations.${i}.value`, parsed.problem);
  });
  const checkShares = (shares: SplitDraft[], path: string) =>
    shares.forEach((s, j) => {
      if (s.variation === null) add(`${path}.${j}.variation`, 'Choose a variation.');
      if (!/^\d+$/.test(s.weight.trim()) || Number(s.weight) > 100) add(`${path}.${j}.weight`, 'Enter a whole number from 0 to 100.');
    });
  if (draft.serve === 'default' && draft.defaultVariation === null) add('default_variation', 'Choose the variation to serve.');
  if (draft.serve === 'split') checkShares(draft.split, 'variation_split');
  draft.rules.forEach((rule, i) => {
    if (rule.serve === 'variation' && rule.variation === null) add(`variation_rules.${i}.variation`, 'Choose a variation.');
    if (rule.serve === 'split') checkShares(rule.split, `variation_rules.${i}.split`);
  });
  // The server's own checks: unique keys, known names, weights summing to 100, 2 to 50 variations.
  const fields = typedFields(draft);
  const splitAt = (path: string) => (path === 'variation_split' ? draft.split : draft.rules[Number(path.split('.')[1])]?.split ?? []);
  for (const problem of validateTypedFields({
    value_type: draft.valueType,
    variations: fields.variations,
    default_variation: fields.default_variation ?? null,
    off_variation: fields.off_variation,
    variation_rules: fields.variation_rules,
    variation_split: fields.variation_split ?? null,
  })) {
    const path = problem.loc.join('.');
    if (problem.msg === VARIATION_MESSAGES.weightsSum) add(path, `Weights add up to ${splitTotal(splitAt(path))}%; they must add up to 100%.`);
    else add(path, sentence(problem.msg));
  }
  if (draft.rules.length > MAX_VARIATION_RULES) add('variation_rules', `At most ${MAX_VARIATION_RULES} variation rules.`);
  return problems;
}

/**
 * Where the typed-flag editor shows messages (for FormError, which lists the rest): `exact` paths, and the
 * variation rules' targeting rules with everything under them (their rule builders show it all).
 */
export function typedErrorPaths(draft: TypedDraft): { exact: string[]; under: string[] } {
  const exact = ['value_type', 'variations', 'default_variation', 'off_variation', 'variation_split', 'variation_rules'];
  const shares = (path: string, split: SplitDraft[]) => split.flatMap((_, j) => [`${path}.${j}.variation`, `${path}.${j}.weight`]);
  draft.variations.forEach((_, i) => exact.push(...['key', 'value', 'name', 'description'].map((f) => `variations.${i}.${f}`)));
  exact.push(...shares('variation_split', draft.split));
  draft.rules.forEach((rule, i) => exact.push(`variation_rules.${i}`, `variation_rules.${i}.variation`, `variation_rules.${i}.split`, ...shares(`variation_rules.${i}.split`, rule.split)));
  return { exact, under: draft.rules.map((_, i) => `variation_rules.${i}.targeting_rules`) };
}
