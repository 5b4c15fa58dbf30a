import { useState, type FormEvent } from 'react';
import { TextArea, TextField, fieldError } from '../../components/form';
import { Badge, ErrorBox } from '../../components/ui';
import { useCreateApiKey } from '../api-keys/hooks';
import { useEvaluateFlag, type EvaluateInput, type Evaluation, type Flag } from './hooks';

const VARIATION_REASONS: Record<NonNullable<Evaluation['variation_reason']>, string> = {
  off: 'the off variation',
  rule: 'a variation rule',
  rule_split: "a variation rule's split",
  split: 'the split',
  default: 'the default variation',
};

/** A typed flag's answer: the variation served and its value (JSON pretty-printed), or that none is served. */
function ServedValue({ result, valueType }: { result: Evaluation; valueType: string }) {
  if (result.variation === undefined) {
    return <p className="evaluation-variation">No variation served (off for this user, and the flag has no off variation): the caller's code default applies.</p>;
  }
  const why = result.variation_reason ? ` · from ${VARIATION_REASONS[result.variation_reason]}` : '';
  return (
    <div className="evaluation-variation">
      <p>
        Variation <code>{result.variation}</code>
        {why}
      </p>
      {valueType === 'json' ? (
        <pre className="evaluation-value" aria-label="Value">
          {JSON.stringify(result.value, null, 2)}
        </pre>
      ) : (
        <p>
          Value <code className="evaluation-value-inline">{JSON.stringify(result.value)}</code>
        </p>
      )}
    </div>
  );
}

const KEY_STORAGE = 'uplift.evaluate-key';

/**
 * "Evaluate for a user": asks the evaluate route exactly what an SDK would get. That route takes an API key, so the
 * panel uses one the user pastes or creates here; it stays in this browser tab's session storage.
 */
export function EvaluatePanel({ flag }: { flag: Flag }) {
  const [apiKey, setApiKey] = useState(() => window.sessionStorage.getItem(KEY_STORAGE) ?? '');
  const [userId, setUserId] = useState('user-1');
  const [contextText, setContextText] = useState('{\n  "country": "US"\n}');
  const [contextError, setContextError] = useState<string>();
  const [asked, setAsked] = useState<Omit<EvaluateInput, 'version'> | null>(null);
  const createKey = useCreateApiKey();
  const evaluation = useEvaluateFlag(asked ? { ...asked, version: flag.updated_at } : null);

  const rememberKey = (value: string) => {
    setApiKey(value);
    window.sessionStorage.setItem(KEY_STORAGE, value);
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    let context: Record<string, unknown> | null = null;
    if (contextText.trim()) {
      try {
        const parsed: unknown = JSON.parse(contextText);
        if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
        context = parsed as Record<string, unknown>;
      } catch {
        setContextError('Context must be a JSON object, for example {"country": "US"}.');
        return;
      }
    }
    setContextError(undefined);
    setAsked({ flagKey: flag.key, apiKey: apiKey.trim(), userId: userId.trim(), context });
  };
  const result = evaluation.data;
  return (
    <section className="card" aria-labelledby="evaluate-title">
      <h2 id="evaluate-title">Evaluate for a user</h2>
      <form onSubmit={submit} noValidate>
        <TextField
          label="API key"
          type="password"
          autoComplete="off"
          value={apiKey}
          hint="Evaluation runs as an SDK would, with an API key. It is kept only in this tab."
          onChange={(e) => rememberKey(e.target.value)}
        />
        {!apiKey && (
          <p>
            <button
              type="button"
              className="secondary"
              disabled={createKey.isPending}
              onClick={() => createKey.mutate({ name: 'Dashboard evaluate panel' }, { onSuccess: (key) => rememberKey(key.key) })}
            >
              Create a key for this panel
            </button>
          </p>
        )}
        {createKey.isError && <ErrorBox error={createKey.error} />}
        <TextField label="User ID" value={userId} required onChange={(e) => setUserId(e.target.value)} error={fieldError(evaluation.error, 'user_id')} />
        <TextArea label="Context (JSON)" rows={4} value={contextText} error={contextError} onChange={(e) => setContextText(e.target.value)} className="mono" />
        <button type="submit" disabled={!apiKey.trim() || !userId.trim()}>
          Evaluate
        </button>
      </form>
      <div className="evaluation" aria-live="polite">
        {evaluation.isFetching && <p className="hint">Evaluating…</p>}
        {evaluation.isError && <ErrorBox error={evaluation.error} />}
        {result && !evaluation.isFetching && (
          <p className="evaluation-result">
            <Badge tone={result.enabled ? 'success' : 'neutral'}>{result.enabled ? 'enabled' : 'disabled'}</Badge> for <code>{asked?.userId}</code> · reason{' '}
            <strong>{result.reason.replace(/_/g, ' ')}</strong>
            {result.rule ? ` · matched ${result.rule}` : ''}
          </p>
        )}
        {result && !evaluation.isFetching && flag.value_type && flag.value_type !== 'boolean' && <ServedValue result={result} valueType={flag.value_type} />}
      </div>
    </section>
  );
}
