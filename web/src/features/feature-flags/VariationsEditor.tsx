import { useState } from 'react';
import { Select, TextArea, TextField } from '../../components/form';
import { RuleBuilder, emptyRules } from '../../components/rule-builder';
import {
  MAX_VARIATION_RULES,
  MAX_VARIATIONS,
  MIN_VARIATIONS,
  addVariation,
  evenWeights,
  removeVariation,
  splitTotal,
  type SplitDraft,
  type TypedDraft,
  type VariationDraft,
  type VariationRuleDraft,
} from './typed-draft';

/** The message for a path: the draft's own problem first, then the server's 422 (rules' targeting: everything under). */
export type ErrorAt = (path: string) => string | undefined;

const variationOptions = (variations: VariationDraft[], none: string): ReadonlyArray<readonly [string, string]> => [
  ['', none],
  ...variations.map((v) => [String(v.id), v.name.trim() ? `${v.key} (${v.name.trim()})` : v.key] as const),
];
const idFrom = (value: string) => (value === '' ? null : Number(value));

/** A split: variations with whole-number weights, the running total, and what is wrong with it. */
export function SplitEditor({
  label,
  path,
  split,
  variations,
  onChange,
  errorAt,
}: {
  label: string;
  path: string;
  split: SplitDraft[];
  variations: VariationDraft[];
  onChange(next: SplitDraft[]): void;
  errorAt: ErrorAt;
}) {
  const total = splitTotal(split);
  const set = (j: number, patch: Partial<SplitDraft>) => onChange(split.map((s, k) => (k === j ? { ...s, ...patch } : s)));
  const unused = variations.find((v) => !split.some((s) => s.variation === v.id));
  return (
    <div className="split-editor" role="group" aria-label={label}>
      <p className={`allocation-total${total === 100 ? '' : ' bad'}`} aria-live="polite">
        Total: <strong>{total}%</strong> {total === 100 ? '✓' : '(must be 100%)'}
      </p>
      {split.map((s, j) => (
        <div className="row" key={j}>
          <Select
            label={`Share ${j + 1} variation`}
            value={s.variation === null ? '' : String(s.variation)}
            options={variationOptions(variations, 'Choose…')}
            error={errorAt(`${path}.${j}.variation`)}
            onChange={(e) => set(j, { variation: idFrom(e.target.value) })}
          />
          <TextField
            label={`Share ${j + 1} weight %`}
            type="number"
            min={0}
            max={100}
            step={1}
            inputMode="numeric"
            value={s.weight}
            error={errorAt(`${path}.${j}.weight`)}
            onChange={(e) => set(j, { weight: e.target.value })}
          />
          <button type="button" className="icon" aria-label={`Remove share ${j + 1}`} disabled={split.length <= 1} onClick={() => onChange(split.filter((_, k) => k !== j))}>
            ×
          </button>
        </div>
      ))}
      {errorAt(path) && (
        <p className="field-error" role="alert">
          {errorAt(path)}
        </p>
      )}
      <div className="row">
        <button type="button" className="secondary" disabled={split.length >= variations.length} onClick={() => onChange([...split, { variation: unused?.id ?? null, weight: '0' }])}>
          + Add share
        </button>
        <button type="button" className="secondary" onClick={() => onChange(split.map((s, j) => ({ ...s, weight: evenWeights(split.length)[j] })))}>
          Split evenly
        </button>
      </div>
    </div>
  );
}

/** What a variation rule or the flag's fallback serves: one variation or a split. */
function ServeChoice({
  name,
  serve,
  labels,
  onChange,
}: {
  name: string;
  serve: string;
  labels: ReadonlyArray<readonly [string, string]>;
  onChange(next: string): void;
}) {
  return (
    <div className="row" role="radiogroup" aria-label={name}>
      {labels.map(([value, text]) => (
        <label className="inline checkbox" key={value}>
          <input type="radio" name={name} value={value} checked={serve === value} onChange={() => onChange(value)} />
          {text}
        </label>
      ))}
    </div>
  );
}

function VariationRow({
  variation,
  index,
  draft,
  errorAt,
  refusal,
  onChange,
  onRemove,
}: {
  variation: VariationDraft;
  index: number;
  draft: TypedDraft;
  errorAt: ErrorAt;
  refusal?: string;
  onChange(patch: Partial<VariationDraft>): void;
  onRemove(): void;
}) {
  const n = index + 1;
  const path = `variations.${index}`;
  const valueProps = { value: variation.value, error: errorAt(`${path}.value`) };
  return (
    <div className="variation" role="group" aria-label={`Variation ${n}`}>
      <div className="row">
        <TextField label={`Variation ${n} key`} required maxLength={255} value={variation.key} error={errorAt(`${path}.key`)} onChange={(e) => onChange({ key: e.target.value })} />
        {draft.valueType === 'number' && (
          <TextField label={`Variation ${n} value`} type="number" step="any" inputMode="decimal" {...valueProps} onChange={(e) => onChange({ value: e.target.value })} />
        )}
        {draft.valueType === 'string' && <TextField label={`Variation ${n} value`} {...valueProps} onChange={(e) => onChange({ value: e.target.value })} />}
        <button type="button" className="icon" aria-label={`Remove variation ${variation.key || n}`} disabled={draft.variations.length <= MIN_VARIATIONS} onClick={onRemove}>
          ×
        </button>
      </div>
      {draft.valueType === 'json' && (
        <TextArea
          label={`Variation ${n} value (JSON)`}
          rows={Math.min(12, Math.max(3, variation.value.split('\n').length))}
          className="mono"
          spellCheck={false}
          hint="An object or an array, at most 32 KiB"
          {...valueProps}
          onChange={(e) => onChange({ value: e.target.value })}
        />
      )}
      <div className="grid-2">
        <TextField label={`Variation ${n} name`} hint="Optional" maxLength={255} value={variation.name} error={errorAt(`${path}.name`)} onChange={(e) => onChange({ name: e.target.value })} />
        <TextField
          label={`Variation ${n} description`}
          hint="Optional"
          maxLength={2000}
          value={variation.description}
          error={errorAt(`${path}.description`)}
          onChange={(e) => onChange({ description: e.target.value })}
        />
      </div>
      {refusal && (
        <p className="field-error" role="alert">
          {refusal}
        </p>
      )}
    </div>
  );
}

function RuleCard({
  rule,
  index,
  count,
  draft,
  segments,
  errorAt,
  rulesErrorAt,
  onChange,
  onMove,
  onRemove,
}: {
  rule: VariationRuleDraft;
  index: number;
  count: number;
  draft: TypedDraft;
  segments: ReadonlyArray<{ id: string; name: string }>;
  errorAt: ErrorAt;
  rulesErrorAt: ErrorAt;
  onChange(next: VariationRuleDraft): void;
  onMove(to: number): void;
  onRemove(): void;
}) {
  const n = index + 1;
  const path = `variation_rules.${index}`;
  return (
    <fieldset className="variation-rule" aria-label={`Variation rule ${n}`}>
      <legend>Rule {n}</legend>
      <RuleBuilder value={rule.rules} onChange={(rules) => onChange({ ...rule, rules })} segments={segments} error={rulesErrorAt(`${path}.targeting_rules`)} idPrefix={`variation-rule-${n}`} />
      <ServeChoice
        name={`Rule ${n} serves`}
        serve={rule.serve}
        labels={[
          ['variation', 'A variation'],
          ['split', 'A split'],
        ]}
        onChange={(serve) =>
          onChange({
            ...rule,
            serve: serve as VariationRuleDraft['serve'],
            split: rule.split.length > 0 ? rule.split : draft.variations.map((v, j) => ({ variation: v.id, weight: evenWeights(draft.variations.length)[j] })),
          })
        }
      />
      {rule.serve === 'variation' ? (
        <Select
          label={`Rule ${n} variation`}
          value={rule.variation === null ? '' : String(rule.variation)}
          options={variationOptions(draft.variations, 'Choose…')}
          error={errorAt(`${path}.variation`)}
          onChange={(e) => onChange({ ...rule, variation: idFrom(e.target.value) })}
        />
      ) : (
        <SplitEditor label={`Rule ${n} split`} path={`${path}.split`} split={rule.split} variations={draft.variations} errorAt={errorAt} onChange={(split) => onChange({ ...rule, split })} />
      )}
      {errorAt(path) && (
        <p className="field-error" role="alert">
          {errorAt(path)}
        </p>
      )}
      <div className="row">
        <button type="button" className="secondary" disabled={index === 0} onClick={() => onMove(index - 1)}>
          Move up
        </button>
        <button type="button" className="secondary" disabled={index === count - 1} onClick={() => onMove(index + 1)}>
          Move down
        </button>
        <button type="button" className="link danger" onClick={onRemove}>
          Remove rule {n}
        </button>
      </div>
    </fieldset>
  );
}

/**
 * The typed-flag part of the flag form: variations with a value editor of the flag's type, what users for whom the
 * flag is on get (a default variation or a split), the off variation, and ordered variation rules.
 */
export function VariationsEditor({
  draft,
  onChange,
  errorAt,
  rulesErrorAt,
  segments,
}: {
  draft: TypedDraft;
  onChange(next: TypedDraft): void;
  errorAt: ErrorAt;
  /** Messages under a variation rule's targeting rules, for its rule builder. */
  rulesErrorAt: ErrorAt;
  segments: ReadonlyArray<{ id: string; name: string }>;
}) {
  // Why a variation could not be removed, by variation id; cleared by the next change.
  const [refusal, setRefusal] = useState<{ id: number; message: string } | null>(null);
  const change = (next: TypedDraft) => {
    setRefusal(null);
    onChange(next);
  };
  const setVariation = (id: number, patch: Partial<VariationDraft>) => change({ ...draft, variations: draft.variations.map((v) => (v.id === id ? { ...v, ...patch } : v)) });
  const setRule = (i: number, rule: VariationRuleDraft) => change({ ...draft, rules: draft.rules.map((r, j) => (j === i ? rule : r)) });
  const moveRule = (from: number, to: number) => {
    const rules = [...draft.rules];
    const [rule] = rules.splice(from, 1);
    rules.splice(to, 0, rule);
    change({ ...draft, rules });
  };
  const remove = (id: number) => {
    const result = removeVariation(draft, id);
    if ('refused' in result) setRefusal({ id, message: result.refused });
    else change(result.draft);
  };
  return (
    <>
      <fieldset className="typed-section">
        <legend>Variations</legend>
        <p className="hint">
          {MIN_VARIATIONS} to {MAX_VARIATIONS} values of type <strong>{draft.valueType}</strong>; the key is what SDKs and reports name.
        </p>
        {draft.variations.map((v, i) => (
          <VariationRow
            key={v.id}
            variation={v}
            index={i}
            draft={draft}
            errorAt={errorAt}
            refusal={refusal?.id === v.id ? refusal.message : undefined}
            onChange={(patch) => setVariation(v.id, patch)}
            onRemove={() => remove(v.id)}
          />
        ))}
        {errorAt('variations') && (
          <p className="field-error" role="alert">
            {errorAt('variations')}
          </p>
        )}
        <button type="button" className="secondary" disabled={draft.variations.length >= MAX_VARIATIONS} onClick={() => change(addVariation(draft))}>
          + Add variation
        </button>
      </fieldset>

      <fieldset className="typed-section">
        <legend>Serve</legend>
        <p className="hint">To users for whom the flag is on and no variation rule matches:</p>
        <ServeChoice
          name="Users for whom the flag is on get"
          serve={draft.serve}
          labels={[
            ['default', 'One variation'],
            ['split', 'A split (sticky per user)'],
          ]}
          onChange={(serve) => change({ ...draft, serve: serve as TypedDraft['serve'] })}
        />
        {draft.serve === 'default' ? (
          <Select
            label="Default variation"
            value={draft.defaultVariation === null ? '' : String(draft.defaultVariation)}
            options={variationOptions(draft.variations, 'Choose…')}
            error={errorAt('default_variation')}
            onChange={(e) => change({ ...draft, defaultVariation: idFrom(e.target.value) })}
          />
        ) : (
          <SplitEditor label="Default split" path="variation_split" split={draft.split} variations={draft.variations} errorAt={errorAt} onChange={(split) => change({ ...draft, split })} />
        )}
        <Select
          label="Off variation"
          hint="Served when the flag is off for a user; without one, the caller's code default is used."
          value={draft.offVariation === null ? '' : String(draft.offVariation)}
          options={variationOptions(draft.variations, "None (the caller's default)")}
          error={errorAt('off_variation')}
          onChange={(e) => change({ ...draft, offVariation: idFrom(e.target.value) })}
        />
      </fieldset>

      <fieldset className="typed-section">
        <legend>Variation rules</legend>
        <p className="hint">Checked in order for users for whom the flag is on; the first rule that matches decides.</p>
        {draft.rules.length === 0 && <p className="hint">No variation rules.</p>}
        {draft.rules.map((rule, i) => (
          <RuleCard
            key={i}
            rule={rule}
            index={i}
            count={draft.rules.length}
            draft={draft}
            segments={segments}
            errorAt={errorAt}
            rulesErrorAt={rulesErrorAt}
            onChange={(next) => setRule(i, next)}
            onMove={(to) => moveRule(i, to)}
            onRemove={() => change({ ...draft, rules: draft.rules.filter((_, j) => j !== i) })}
          />
        ))}
        {errorAt('variation_rules') && (
          <p className="field-error" role="alert">
            {errorAt('variation_rules')}
          </p>
        )}
        <button
          type="button"
          className="secondary"
          disabled={draft.rules.length >= MAX_VARIATION_RULES}
          onClick={() => change({ ...draft, rules: [...draft.rules, { rules: emptyRules(), serve: 'variation', variation: draft.variations[0]?.id ?? null, split: [] }] })}
        >
          + Add variation rule
        </button>
      </fieldset>
    </>
  );
}
