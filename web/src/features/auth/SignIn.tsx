import { useState, type FormEvent } from 'react';
import { FormError, TextField, fieldError } from '../../components/form';
import { useLogin } from './hooks';
import { useSession } from './session';

export function SignIn() {
  const { signIn } = useSession();
  const login = useLogin();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    login.mutate({ email, password }, { onSuccess: (data) => signIn(data.access_token) });
  };
  return (
    <main className="signin" id="main">
      <form className="card signin-card" onSubmit={submit} aria-labelledby="signin-title">
        <p className="brand">Uplift</p>
        <h1 id="signin-title">Sign in</h1>
        <TextField label="Email" type="email" autoComplete="username" required value={email} error={fieldError(login.error, 'email')} onChange={(e) => setEmail(e.target.value)} />
        <TextField
          label="Password"
          type="password"
          autoComplete="current-password"
          required
          value={password}
          error={fieldError(login.error, 'password')}
          onChange={(e) => setPassword(e.target.value)}
        />
        <FormError error={login.error} shown={['email', 'password']} />
        <button type="submit" disabled={login.isPending}>
          {login.isPending ? 'Signing in…' : 'Sign in'}
        </button>
        <p className="hint signin-hint">
          First run? Start the server with <code>FIRST_SUPERUSER_EMAIL</code> and <code>FIRST_SUPERUSER_PASSWORD</code> set to create the first
          account, then sign in with them.
        </p>
      </form>
    </main>
  );
}
