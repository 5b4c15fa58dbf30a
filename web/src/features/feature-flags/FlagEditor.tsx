import { useState, type FormEvent } from 'react';
import { FormError, Select, TextArea, TextField, fieldError, fieldErrorsUnder } from '../../components/form';
import { RuleBuilder, emptyRules, fromRules, toRules, type RulesDraft } from '../../components/rule-builder';
import { useToast } from '../../components/toast';
import { flagKeyProblem, problemsOf, requiredText } from '../../components/validate';
import { useRouter } from '../../router';
import { useSegments } from '../segments/hooks';
import { useCreateFlag, useUpdateFlag, type Flag } from './hooks';
import { VALUE_TYPE_OPTIONS, fromFlag, newTypedDraft, typedErrorPaths, typedFields, typedProblems, withValueType, type TypedDraft, type ValueType } from './typed-draft';
import { VariationsEditor } from './VariationsEditor';

/** The environment the editor reads and writes: `param` for the flag routes, `name` shown once there are several. */
export interface FlagEnvironment {
  param?: string;
  name?: string;
}

/**
 * Create or edit a flag: name, key, description, tags, rollout percentage and targeting rules; for a typed flag
 * (value type fixed at creation) its variations, what it serves and its variation rules.
 */
export function FlagEditor({ flag, readOnly = false, environment }: { flag?: Flag; readOnly?: boolean; environment?: FlagEnvironment }) {
  const { navigate } = useRouter();
  const create = useCreateFlag(environment?.param);
  const update = useUpdateFlag(flag?.id ?? '', environment?.param);
  const mutation = flag ? update : create;
  const segments = useSegments('active');
  const [name, setName] = useState(flag?.name ?? '');
  const [key, setKey] = useState(flag?.key ?? '');
  const [description, setDescription] = useState(flag?.description ?? '');
  const [tags, setTags] = useState((flag?.tags ?? []).join(', '));
  const [rollout, setRollout] = useState(flag?.rollout_percentage ?? 100);
  const [rules, setRules] = useState<RulesDraft>(flag ? fromRules(flag.targeting_rules) : emptyRules());
  const [typed, setTyped] = useState<TypedDraft>(() => (flag ? fromFlag(flag) : null) ?? newTypedDraft('boolean'));
  const [typedRefused, setTypedRefused] = useState(false);
  const isTyped = typed.valueType !== 'boolean';
  const typedIssues: Record<string, string> = isTyped ? typedProblems(typed) : {};
  const typedPaths = typedErrorPaths(typed);
  const toast = useToast();
  const [problems, setProblems] = useState<Record<string, string> | null>(null);
  // Checked in the browser before sending; the API's own message for a field shows when the browser has none.
  const err = (field: string) => problems?.[field] ?? fieldError(mutation.error, field);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const found = problemsOf({ name: requiredText(name), ...(flag ? {} : { key: flagKeyProblem(key) }), description: description.length > 2000 ? 'Use at most 2000 characters.' : undefined });
    setProblems(found);
    if (found) return;
    const tagList = tags.split(',').map((t) => t.trim()).filter(Boolean);
    const targeting = toRules(rules);
    if (isTyped && Object.keys(typedIssues).length > 0) {
      setTypedRefused(true);
      return;
    }
    setTypedRefused(false);
    const typedBody = isTyped ? typedFields(typed) : null;
    if (flag) {
      update.mutate(
        {
          name,
          description,
          rollout_percentage: rollout,
          tags: tagList,
          // An empty rule set clears targeting (PUT refuses null).
          targeting_rules: targeting ?? { logical_operator: 'AND', groups: [] },
          ...typedBody,
        },
        { onSuccess: (saved) => toast.show(`Flag “${saved.name}” saved.`) },
      );
    } else {
      create.mutate(
        {
          key,
          name,
          rollout_percentage: rollout,
          ...(description ? { description } : {}),
          ...(tagList.length ? { tags: tagList } : {}),
          ...(targeting ? { targeting_rules: targeting } : {}),
          ...(typedBody
            ? {
                value_type: typed.valueType,
                ...typedBody,
                off_variation: typedBody.off_variation ?? undefined,
                variation_rules: typedBody.variation_rules.length ? typedBody.variation_rules : undefined,
              }
            : {}),
        },
        {
          onSuccess: (created) => {
            toast.show(`Flag “${created.name}” created.`);
            navigate(`/flags/${created.id}`);
          },
        },
      );
    }
  };
  return (
    <form className="card form" onSubmit={submit} noValidate aria-label={flag ? 'Flag settings' : 'New flag'}>
      {environment?.name && (
        <p className="environment-editing hint" data-testid="editing-environment">
          {flag ? 'Editing' : 'Creating'} in <strong>{environment.name}</strong>: on/off, rollout, targeting rules and what a typed flag serves are per
          environment{flag ? '' : ' (every other environment gets the same rules, turned off)'}; name, description, tags and variations are shared.
        </p>
      )}
      <fieldset disabled={readOnly} className="plain-fieldset">
        <div className="grid-2">
          <TextField label="Name" required value={name} error={err('name')} onChange={(e) => setName(e.target.value)} />
          <TextField
            label="Key"
            required
            value={key}
            disabled={Boolean(flag)}
            hint="Letters, digits, _ . : -; SDKs ask for the flag by this key"
            error={err('key')}
            onChange={(e) => setKey(e.target.value)}
          />
        </div>
        <TextArea
          label="Description"
          rows={2}
          value={description}
          error={err('description')}
          onChange={(e) => setDescription(e.target.value)}
        />
        <TextField label="Tags" hint="Comma-separated" value={tags} error={fieldErrorsUnder(mutation.error, 'tags')} onChange={(e) => setTags(e.target.value)} />
        <div className="field">
          <label htmlFor="rollout">
            Rollout: <strong>{rollout}%</strong> of users who pass the targeting rules
          </label>
          <input
            id="rollout"
            type="range"
            min={0}
            max={100}
            step={1}
            value={rollout}
            aria-valuetext={`${rollout}%`}
            aria-describedby={fieldError(mutation.error, 'rollout_percentage') ? 'rollout-error' : undefined}
            onChange={(e) => setRollout(Number(e.target.value))}
          />
          {fieldError(mutation.error, 'rollout_percentage') && (
            <p className="field-error" id="rollout-error" role="alert">
              {fieldError(mutation.error, 'rollout_percentage')}
            </p>
          )}
        </div>
        <RuleBuilder value={rules} onChange={setRules} segments={segments.data ?? []} error={fieldErrorsUnder(mutation.error, 'targeting_rules')} idPrefix="flag-rules" />
        {flag ? (
          isTyped && (
            <p>
              Value type <strong>{typed.valueType}</strong> <span className="hint">(fixed when the flag was created)</span>
            </p>
          )
        ) : (
          <Select
            label="Value type"
            hint="Fixed once the flag is created. A boolean flag is on or off; the others serve one of their variations."
            value={typed.valueType}
            options={VALUE_TYPE_OPTIONS}
            error={fieldError(mutation.error, 'value_type')}
            onChange={(e) => setTyped(withValueType(typed, e.target.value as ValueType))}
          />
        )}
        {isTyped && (
          <VariationsEditor
            draft={typed}
            onChange={setTyped}
            errorAt={(path) => typedIssues[path] ?? fieldError(mutation.error, path)}
            rulesErrorAt={(path) => fieldErrorsUnder(mutation.error, path)}
            segments={segments.data ?? []}
          />
        )}
      </fieldset>
      {isTyped && typedRefused && Object.keys(typedIssues).length > 0 && (
        <p className="alert alert-error" role="alert">
          Fix the marked variation fields before saving.
        </p>
      )}
      <FormError
        error={mutation.error}
        shown={['name', 'key', 'description', 'tags', 'rollout_percentage', 'targeting_rules', ...(isTyped ? typedPaths.under : [])]}
        exact={isTyped ? typedPaths.exact : []}
      />
      {!readOnly && (
        <div className="row">
          <button type="submit" disabled={mutation.isPending}>
            {mutation.isPending ? 'Saving…' : flag ? 'Save flag' : 'Create flag'}
          </button>
          {!flag && (
            <button type="button" className="secondary" onClick={() => navigate('/flags')}>
              Cancel
            </button>
          )}
        </div>
      )}
    </form>
  );
}
