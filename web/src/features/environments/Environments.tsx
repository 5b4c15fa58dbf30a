import { useState, type FormEvent } from 'react';
import { FormError, Select, TextArea, TextField, fieldError } from '../../components/form';
import { useToast } from '../../components/toast';
import { Badge, DataTable, ErrorBox, Loading, PageHeader, dateTime } from '../../components/ui';
import { requiredText } from '../../components/validate';
import { useSession } from '../auth/session';
import { EnvironmentName } from './EnvironmentSwitcher';
import { useCreateEnvironment, useDeleteEnvironment, useEnvironments, useUpdateEnvironment, type Environment } from './hooks';

const KEY_PATTERN = /^[a-z0-9_-]{1,64}$/;
const COLOR_PATTERN = /^#[0-9a-fA-F]{6}$/;

interface Draft {
  key: string;
  name: string;
  description: string;
  color: string;
  sortOrder: string;
  copyFrom: string;
}

const emptyDraft = (): Draft => ({ key: '', name: '', description: '', color: '', sortOrder: '', copyFrom: '' });
const draftOf = (e: Environment): Draft => ({
  key: e.key,
  name: e.name,
  description: e.description ?? '',
  color: e.color ?? '',
  sortOrder: String(e.sort_order),
  copyFrom: '',
});

/** What the browser can tell before sending; the API's messages show for the rest. */
function problemsOf(draft: Draft, creating: boolean): Record<string, string> {
  const found: Record<string, string> = {};
  if (creating && !KEY_PATTERN.test(draft.key)) found.key = 'Use 1 to 64 of a-z, 0-9, - and _.';
  const name = requiredText(draft.name);
  if (name) found.name = name;
  if (draft.color && !COLOR_PATTERN.test(draft.color)) found.color = 'Use a hex colour such as #f59e0b.';
  if (draft.sortOrder.trim() && !Number.isInteger(Number(draft.sortOrder))) found.sort_order = 'Use a whole number.';
  return found;
}

/**
 * Environments: every role reads the list; ADMIN (and superusers) create one (optionally copying every flag's state
 * from another), edit its name, description, colour and order, make it the default, and delete it.
 */
export function Environments() {
  const { permissions } = useSession();
  const canEdit = permissions.isAdmin;
  const environments = useEnvironments();
  const create = useCreateEnvironment();
  const update = useUpdateEnvironment();
  const remove = useDeleteEnvironment();
  const toast = useToast();
  const [editing, setEditing] = useState<string | null>(null);
  const [draft, setDraft] = useState<Draft>(emptyDraft);
  const [problems, setProblems] = useState<Record<string, string>>({});
  const mutation = editing ? update : create;
  const err = (field: string) => problems[field] ?? fieldError(mutation.error, field);
  const set = (field: keyof Draft) => (e: { target: { value: string } }) => setDraft({ ...draft, [field]: e.target.value });

  const reset = () => {
    setEditing(null);
    setDraft(emptyDraft());
    setProblems({});
    create.reset();
    update.reset();
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const found = problemsOf(draft, !editing);
    setProblems(found);
    if (Object.keys(found).length > 0) return;
    const shared = {
      name: draft.name.trim(),
      description: draft.description.trim() || null,
      color: draft.color || null,
      ...(draft.sortOrder.trim() ? { sort_order: Number(draft.sortOrder) } : {}),
    };
    if (editing) {
      update.mutate({ key: editing, body: shared }, { onSuccess: (saved) => (toast.show(`Environment “${saved.name}” saved.`), reset()) });
    } else {
      create.mutate(
        { key: draft.key, ...shared, ...(draft.copyFrom ? { copy_from: draft.copyFrom } : {}) },
        { onSuccess: (saved) => (toast.show(`Environment “${saved.name}” created.`), reset()) },
      );
    }
  };

  const makeDefault = (e: Environment) =>
    window.confirm(`Make “${e.name}” the default environment? Flag routes without ?environment= and new API keys then use it.`) &&
    update.mutate({ key: e.key, body: { is_default: true } }, { onSuccess: (saved) => toast.show(`“${saved.name}” is now the default environment.`) });
  const destroy = (e: Environment) =>
    window.confirm(`Delete “${e.name}”? Every flag's state in it is deleted too.`) &&
    remove.mutate(e.key, { onSuccess: () => toast.show(`Environment “${e.name}” deleted.`) });

  const list = environments.data ?? [];
  const rowError = remove.error ?? (!editing ? update.error : null);
  return (
    <section>
      <PageHeader title="Environments" />
      <p className="hint">
        Each environment holds its own on/off state, rollout, targeting rules and served variations for every flag; an API key answers in its
        environment. Experiments, segments and events are shared.
      </p>
      {rowError && <ErrorBox error={rowError} />}
      {environments.isPending ? (
        <Loading rows={3} label="Loading environments" />
      ) : environments.isError ? (
        <ErrorBox error={environments.error} />
      ) : (
        <DataTable headers={['Name', 'Key', 'Description', 'Order', 'Created', ...(canEdit ? ['Actions'] : [])]} caption={<span className="visually-hidden">Environments</span>}>
          {list.map((e) => (
            <tr key={e.key}>
              <td>
                <EnvironmentName environment={e} /> {e.is_default && <Badge tone="info">default</Badge>}
              </td>
              <td>
                <code>{e.key}</code>
              </td>
              <td>{e.description ?? '—'}</td>
              <td>{e.sort_order}</td>
              <td>{dateTime(e.created_at)}</td>
              {canEdit && (
                <td className="row-actions">
                  <button type="button" className="link" aria-label={`Edit ${e.name}`} onClick={() => (reset(), setEditing(e.key), setDraft(draftOf(e)))}>
                    Edit
                  </button>
                  {!e.is_default && (
                    <>
                      {' '}
                      <button type="button" className="link" aria-label={`Make ${e.name} the default`} onClick={() => makeDefault(e)}>
                        Make default
                      </button>{' '}
                      <button type="button" className="link danger" aria-label={`Delete ${e.name}`} onClick={() => destroy(e)}>
                        Delete
                      </button>
                    </>
                  )}
                </td>
              )}
            </tr>
          ))}
        </DataTable>
      )}
      {canEdit && environments.isSuccess && (
        <form className="card form" onSubmit={submit} noValidate aria-label={editing ? 'Edit environment' : 'New environment'}>
          <h2>{editing ? `Edit “${list.find((e) => e.key === editing)?.name ?? editing}”` : 'New environment'}</h2>
          <div className="grid-2">
            <TextField label="Name" required value={draft.name} error={err('name')} onChange={set('name')} />
            <TextField
              label="Key"
              required
              value={draft.key}
              disabled={Boolean(editing)}
              hint="a-z, 0-9, - and _; never changes"
              error={err('key')}
              onChange={set('key')}
            />
          </div>
          <TextArea label="Description" rows={2} value={draft.description} error={err('description')} onChange={set('description')} />
          <div className="grid-2">
            <TextField label="Colour" placeholder="#f59e0b" hint="Optional, #rrggbb" value={draft.color} error={err('color')} onChange={set('color')} />
            <TextField label="Sort order" inputMode="numeric" hint="Lower first in lists" value={draft.sortOrder} error={err('sort_order')} onChange={set('sortOrder')} />
          </div>
          {!editing && (
            <Select
              label="Flag state"
              hint="Every flag starts off in a new environment, or with each flag's state copied from another"
              value={draft.copyFrom}
              options={[['', 'Every flag off'], ...list.map((e) => [e.key, `Copy from ${e.name}`] as const)]}
              error={err('copy_from')}
              onChange={set('copyFrom')}
            />
          )}
          <FormError error={mutation.error} shown={['name', 'key', 'description', 'color', 'sort_order', 'copy_from']} />
          <div className="row">
            <button type="submit" disabled={mutation.isPending}>
              {editing ? 'Save environment' : 'Create environment'}
            </button>
            {editing && (
              <button type="button" className="secondary" onClick={reset}>
                Cancel
              </button>
            )}
          </div>
        </form>
      )}
    </section>
  );
}
