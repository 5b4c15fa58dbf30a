import { useState, type FormEvent } from 'react';
import { FormError, Select, TextField, fieldError } from '../../components/form';
import { Badge, DataTable, ErrorBox, Loading, PageHeader, dateTime } from '../../components/ui';
import { useSession } from '../auth/session';
import { useAdminUsers, useCreateUser, usePatchUser, type UserPatch } from './hooks';

type Role = NonNullable<UserPatch['role']>;
const ROLES: ReadonlyArray<readonly [Role, string]> = [
  ['ADMIN', 'Admin'],
  ['DEVELOPER', 'Developer'],
  ['ANALYST', 'Analyst'],
  ['VIEWER', 'Viewer'],
];

/** Users and roles (superusers only): search, create, change role, activate or deactivate, superuser flag. */
export function Users() {
  const { me } = useSession();
  const [search, setSearch] = useState('');
  const users = useAdminUsers(search.trim());
  const patch = usePatchUser();
  return (
    <section>
      <PageHeader title="Users and roles" />
      <NewUserForm />
      <div className="toolbar" role="search">
        <label>
          <span className="visually-hidden">Search users</span>
          <input type="search" placeholder="Search username, email or name" value={search} onChange={(e) => setSearch(e.target.value)} />
        </label>
      </div>
      {patch.isError && <ErrorBox error={patch.error} />}
      {users.isPending ? (
        <Loading rows={4} label="Loading users" />
      ) : users.isError ? (
        <ErrorBox error={users.error} />
      ) : (
        <DataTable headers={['User', 'Email', 'Role', 'Active', 'Superuser', 'Last sign-in']}>
          {users.data.items.map((u) => {
            const self = u.id === me?.id;
            return (
              <tr key={u.id}>
                <td>
                  {u.full_name ?? u.username} {self && <Badge tone="info">you</Badge>}
                  <div className="hint">{u.username}</div>
                </td>
                <td>{u.email ?? '—'}</td>
                <td>
                  <select
                    aria-label={`Role of ${u.username}`}
                    value={u.role ?? 'VIEWER'}
                    disabled={patch.isPending}
                    onChange={(e) => patch.mutate({ id: u.id, patch: { role: e.target.value as Role } })}
                  >
                    {ROLES.map(([value, label]) => (
                      <option key={value} value={value}>
                        {label}
                      </option>
                    ))}
                  </select>
                </td>
                <td>
                  <input
                    type="checkbox"
                    aria-label={`${u.username} is active`}
                    checked={u.is_active}
                    disabled={self || patch.isPending}
                    onChange={(e) => patch.mutate({ id: u.id, patch: { is_active: e.target.checked } })}
                  />
                </td>
                <td>
                  <input
                    type="checkbox"
                    aria-label={`${u.username} is a superuser`}
                    checked={u.is_superuser}
                    disabled={self || patch.isPending}
                    onChange={(e) => patch.mutate({ id: u.id, patch: { is_superuser: e.target.checked } })}
                  />
                </td>
                <td>{dateTime(u.last_login)}</td>
              </tr>
            );
          })}
        </DataTable>
      )}
    </section>
  );
}

function NewUserForm() {
  const create = useCreateUser();
  const [username, setUsername] = useState('');
  const [email, setEmail] = useState('');
  const [fullName, setFullName] = useState('');
  const [password, setPassword] = useState('');
  const [role, setRole] = useState<Role>('VIEWER');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate(
      { user: { username, email, password, ...(fullName ? { full_name: fullName } : {}) }, role },
      {
        onSuccess: () => {
          setUsername('');
          setEmail('');
          setFullName('');
          setPassword('');
        },
      },
    );
  };
  return (
    <details className="card">
      <summary>Add a user</summary>
      <form onSubmit={submit} noValidate>
        <div className="grid-2">
          <TextField label="Username" value={username} error={fieldError(create.error, 'username')} onChange={(e) => setUsername(e.target.value)} />
          <TextField label="Email" type="email" value={email} error={fieldError(create.error, 'email')} onChange={(e) => setEmail(e.target.value)} />
          <TextField label="Full name" value={fullName} error={fieldError(create.error, 'full_name')} onChange={(e) => setFullName(e.target.value)} />
          <TextField
            label="Password"
            type="password"
            autoComplete="new-password"
            hint="8+ characters with an upper-case letter, a lower-case letter and a digit"
            value={password}
            error={fieldError(create.error, 'password')}
            onChange={(e) => setPassword(e.target.value)}
          />
          <Select label="Role" value={role} options={ROLES} onChange={(e) => setRole(e.target.value as Role)} />
        </div>
        <FormError error={create.error} shown={['username', 'email', 'full_name', 'password']} />
        {create.isSuccess && (
          <p className="alert alert-success" role="status">
            User created.
          </p>
        )}
        <button type="submit" disabled={create.isPending}>
          Create user
        </button>
      </form>
    </details>
  );
}
