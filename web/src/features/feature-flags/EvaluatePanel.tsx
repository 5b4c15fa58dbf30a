import { useEffect, useState, type FormEvent } from 'react';
import { TextArea, TextField, fieldError } from '../../components/form';
import { ApiError } from '../../api/client';
import { Badge, ErrorBox } from '../../components/ui';
import { Link } from '../../router';
import { useApiKeys, useCreateApiKey } from '../api-keys/hooks';
import { useSelectedEnvironment } from '../environments/hooks';
import { useSession } from '../auth/session';
import { useSegments } from '../segments/hooks';
import { PANEL_KEY_NAME, loadPanelKey, nameSegments, savePanelKey } from './evaluate-key';
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

/**
 * "Evaluate for a user": asks the evaluate route exactly what an SDK would get. That route takes an API key, so the
 * panel uses one the user pastes or creates here, and keeps it for this account in this browser (evaluate-key.ts).
 */
export function EvaluatePanel({ flag }: { flag: Flag }) {
  const { me } = useSession();
  const [apiKey, setApiKey] = useState(() => loadPanelKey(me?.id));
  // The account may still be loading on the first render: take its kept key once it is known.
  useEffect(() => {
    if (me?.id) setApiKey((current) => current || loadPanelKey(me.id));
  }, [me?.id]);
  const ownKeys = useApiKeys(false);
  const segments = useSegments();
  const earlier = ownKeys.data?.find((k) => k.name === PANEL_KEY_NAME && (!k.expires_at || Date.parse(k.expires_at) > Date.now()));
  // Keys belong to an environment: with several, say which one the key in use answers in (its prefix names it).
  const environments = useSelectedEnvironment();
  const keyEnvironment = apiKey.trim() ? ownKeys.data?.find((k) => apiKey.trim().startsWith(k.key_prefix))?.environment : undefined;
  const [userId, setUserId] = useState('user-1');
  const [contextText, setContextText] = useState('{\n  "country": "US"\n}');
  const [contextError, setContextError] = useState<string>();
  const [asked, setAsked] = useState<Omit<EvaluateInput, 'version'> | null>(null);
  const createKey = useCreateApiKey();
  const evaluation = useEvaluateFlag(asked ? { ...asked, version: flag.updated_at } : null);

  const rememberKey = (value: string) => {
    setApiKey(value);
    savePanelKey(me?.id, value.trim());
  };
  // A kept key that was revoked or expired answers 401: forget it, so the panel asks again.
  const rejected = evaluation.error instanceof ApiError && evaluation.error.status === 401;
  useEffect(() => {
    if (rejected && loadPanelKey(me?.id) === asked?.apiKey) savePanelKey(me?.id, '');
  }, [rejected, me?.id, asked?.apiKey]);
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
          hint="Evaluation runs as an SDK would, with an API key. It is kept for your account in this browser and reused."
          onChange={(e) => rememberKey(e.target.value)}
        />
        {environments.several && keyEnvironment && (
          <p className="hint" data-testid="evaluate-environment">
            This key answers in <strong>{environments.all.find((e) => e.key === keyEnvironment)?.name ?? keyEnvironment}</strong> (an API key
            belongs to one environment).
          </p>
        )}
        {rejected && <p className="field-error">This key was refused (revoked or expired). Paste another key, or create one.</p>}
        {!apiKey && (
          <div className="hint">
            {earlier && (
              <p>
                You already have a key “{PANEL_KEY_NAME}” (<code>{earlier.key_prefix}…</code>); its full value was shown once when it was created. Paste it
                here, or create a new one (and revoke the old one on the <Link to="/api-keys">API keys</Link> page).
              </p>
            )}
            <p>
              <button
                type="button"
                className="secondary"
                disabled={createKey.isPending}
                onClick={() => createKey.mutate({ name: PANEL_KEY_NAME }, { onSuccess: (key) => rememberKey(key.key) })}
              >
                Create a key for this panel
              </button>
            </p>
          </div>
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
            {result.rule ? ` · matched ${nameSegments(result.rule, segments.data ?? [])}` : ''}
          </p>
        )}
        {result && !evaluation.isFetching && flag.value_type && flag.value_type !== 'boolean' && <ServedValue result={result} valueType={flag.value_type} />}
      </div>
    </section>
  );
}
