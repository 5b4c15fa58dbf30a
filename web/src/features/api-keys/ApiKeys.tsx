import { useState, type FormEvent } from 'react';
import { FormError, Select, TextField, fieldError } from '../../components/form';
import { DataTable, Empty, ErrorBox, Loading, PageHeader, dateTime, timeAgo } from '../../components/ui';
import { requiredText } from '../../components/validate';
import { useSession } from '../auth/session';
import { useEnvironments } from '../environments/hooks';
import { useApiKeys, useCreateApiKey, useDeleteApiKey } from './hooks';

/** API keys: create (the full value is shown once, with a copy button), list, revoke. ADMIN may list everyone's. */
export function ApiKeys() {
  const { permissions, me } = useSession();
  const [all, setAll] = useState(false);
  const keys = useApiKeys(all && permissions.isAdmin);
  const create = useCreateApiKey();
  const remove = useDeleteApiKey();
  const [name, setName] = useState('');
  const [sdkScope, setSdkScope] = useState(false);
  const environments = useEnvironments();
  const defaultEnvironment = environments.data?.find((e) => e.is_default)?.key ?? '';
  /** Empty: the default environment (the API's own default when the list cannot be read). */
  const [environment, setEnvironment] = useState('');
  /** A `datetime-local` value (the browser's time zone); empty: the key never expires. */
  const [expires, setExpires] = useState('');
  const [created, setCreated] = useState<{ name: string; key: string } | null>(null);
  const [copied, setCopied] = useState(false);
  const [nameProblem, setNameProblem] = useState<string>();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setCopied(false);
    const problem = requiredText(name);
    setNameProblem(problem);
    if (problem) return;
    create.mutate(
      {
        name,
        scopes: sdkScope ? ['sdk:ruleset'] : [],
        ...(expires ? { expires_at: new Date(expires).toISOString() } : {}),
        ...((environment || defaultEnvironment) ? { environment: environment || defaultEnvironment } : {}),
      },
      {
        onSuccess: (key) => {
          setCreated({ name: key.name, key: key.key });
          setName('');
          setExpires('');
        },
      },
    );
  };
  const copy = async () => {
    if (!created) return;
    await navigator.clipboard.writeText(created.key);
    setCopied(true);
  };
  return (
    <section>
      <PageHeader title="API keys" />
      {created && (
        <div className="alert alert-success" role="status">
          <p>
            <strong>Key “{created.name}” created.</strong> Copy it now: it is shown only once.
          </p>
          <div className="secret">
            <code data-testid="new-key">{created.key}</code>
            <button type="button" className="secondary" onClick={() => void copy()}>
              {copied ? 'Copied' : 'Copy'}
            </button>
            <button type="button" className="link" onClick={() => setCreated(null)}>
              Done
            </button>
          </div>
        </div>
      )}
      <form className="card" onSubmit={submit} noValidate>
        <h2>New key</h2>
        <div className="row">
          <TextField label="Key name" value={name} error={nameProblem ?? fieldError(create.error, 'name')} onChange={(e) => setName(e.target.value)} />
          <TextField
            label="Expires (optional)"
            type="datetime-local"
            value={expires}
            hint="Leave empty for a key that never expires"
            error={fieldError(create.error, 'expires_at')}
            onChange={(e) => setExpires(e.target.value)}
          />
          {environments.isSuccess && (
            <Select
              label="Environment"
              hint="Every evaluation with the key answers in this environment"
              value={environment || defaultEnvironment}
              options={environments.data.map((e) => [e.key, e.is_default ? `${e.name} (default)` : e.name] as const)}
              error={fieldError(create.error, 'environment')}
              onChange={(e) => setEnvironment(e.target.value)}
            />
          )}
          <label className="inline checkbox">
            <input type="checkbox" checked={sdkScope} onChange={(e) => setSdkScope(e.target.checked)} /> SDK ruleset and batch assignment (<code>sdk:ruleset</code>)
          </label>
          <button type="submit" disabled={create.isPending}>
            Create key
          </button>
        </div>
        <FormError error={create.error} shown={['name', 'expires_at', 'environment']} />
      </form>
      {permissions.isAdmin && (
        <label className="inline checkbox">
          <input type="checkbox" checked={all} onChange={(e) => setAll(e.target.checked)} /> Show everyone’s keys
        </label>
      )}
      {remove.isError && <ErrorBox error={remove.error} />}
      {keys.isPending ? (
        <Loading rows={3} label="Loading keys" />
      ) : keys.isError ? (
        <ErrorBox error={keys.error} />
      ) : keys.data.length === 0 ? (
        <Empty title="No API keys yet.">SDKs and servers send tracking events and evaluate flags with a key.</Empty>
      ) : (
        <DataTable headers={['Name', 'Starts with', 'Environment', 'Scopes', 'Created', 'Expires', 'Last used', 'Actions']}>
          {keys.data.map((key) => (
            <tr key={key.id}>
              <td>{key.name}</td>
              <td>
                <code>{key.key_prefix}…</code>
              </td>
              <td>{environments.data?.find((e) => e.key === key.environment)?.name ?? key.environment}</td>
              <td>{key.scopes.join(', ') || '—'}</td>
              <td>{dateTime(key.created_at)}</td>
              <td>
                {key.expires_at ? dateTime(key.expires_at) : 'Never'}
                {key.expires_at && Date.parse(key.expires_at) <= Date.now() && <> <span className="badge badge-neutral">expired</span></>}
              </td>
              <td className="last-used">
                {key.last_used_at ? (
                  <time dateTime={key.last_used_at} title={dateTime(key.last_used_at)}>
                    {timeAgo(key.last_used_at)}
                  </time>
                ) : (
                  'Never used'
                )}
              </td>
              <td>
                {(key.user_id === me?.id || permissions.isAdmin) && (
                  <button type="button" className="link danger" onClick={() => window.confirm(`Revoke “${key.name}”? Apps using it stop working.`) && remove.mutate(key.id)}>
                    Revoke
                  </button>
                )}
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}
