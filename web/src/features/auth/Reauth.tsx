import { useEffect, useRef, useState, type FormEvent } from 'react';
import { FormError, TextField, fieldError } from '../../components/form';
import { useLogin } from './hooks';
import { minutesLeft } from './expiry';

/**
 * Signing in again without leaving the page: a modal over it, so whatever the user was editing stays as it was
 * (the page is not unmounted), and after it the failed reads run again and Save can simply be pressed again.
 */
export function ReauthDialog({ email, expired, onSignedIn, onCancel, onSignOut }: { email: string; expired: boolean; onSignedIn(token: string): void; onCancel?: () => void; onSignOut(): void }) {
  const login = useLogin();
  const [password, setPassword] = useState('');
  const first = useRef<HTMLDivElement>(null);
  useEffect(() => first.current?.querySelector<HTMLInputElement>('input[type="password"]')?.focus(), []);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    login.mutate({ email, password }, { onSuccess: (data) => onSignedIn(data.access_token) });
  };
  return (
    <div className="modal-backdrop">
      <div className="modal card" role="dialog" aria-modal="true" aria-labelledby="reauth-title" ref={first}>
        <form onSubmit={submit} noValidate>
          <h2 id="reauth-title">{expired ? 'Your session has expired' : 'Sign in again'}</h2>
          <p>
            {expired ? 'Sign in again to carry on.' : 'Sign in again to start a new session.'} What you were doing stays on the page: nothing you typed is lost,
            and anything that was not saved can be saved afterwards.
          </p>
          <TextField label="Email" type="email" value={email} readOnly autoComplete="username" />
          <TextField label="Password" type="password" autoComplete="current-password" value={password} error={fieldError(login.error, 'password')} onChange={(e) => setPassword(e.target.value)} />
          <FormError error={login.error} shown={['password']} />
          <div className="row">
            <button type="submit" disabled={login.isPending || !password}>
              {login.isPending ? 'Signing in…' : 'Sign in'}
            </button>
            {onCancel && (
              <button type="button" className="secondary" onClick={onCancel}>
                Not now
              </button>
            )}
            <button type="button" className="link" onClick={onSignOut}>
              Sign out
            </button>
          </div>
        </form>
      </div>
    </div>
  );
}

export function ExpiryWarning({ expiresAt, now, onRenew }: { expiresAt: number; now: number; onRenew(): void }) {
  return (
    <div className="alert alert-warning session-warning" role="status">
      <span>
        Your session ends in {minutesLeft(expiresAt, now)}. Sign in again to keep working without interruption; unsaved changes stay on the page.
      </span>{' '}
      <button type="button" className="secondary" onClick={onRenew}>
        Sign in again
      </button>
    </div>
  );
}
