import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useState } from 'react';
import { beforeEach, describe, expect, it, vi } from 'vitest';

const fetchMock = vi.hoisted(() => {
  const mock = vi.fn<(request: Request) => Promise<Response>>();
  globalThis.fetch = mock as unknown as typeof fetch;
  return mock;
});

const { api, unwrap } = await import('../../api/client');
const { useSession } = await import('./session');
const { json, renderWithProviders, router, signedInAs } = await import('../../test/harness');

const b64 = (value: unknown) => btoa(JSON.stringify(value)).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
const jwt = (expSeconds: number, sub = 'u1') => `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ sub, exp: expSeconds })}.sig`;

/** A page with an edit in progress and a Save that calls the API. */
function EditPage() {
  const { me } = useSession();
  const [text, setText] = useState('');
  const [saved, setSaved] = useState('');
  if (!me) return <p>Loading</p>;
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        void unwrap(api.GET('/api/v1/feature-flags/', { params: { query: { skip: 0, limit: 100 } } })).then(() => setSaved(text), () => undefined);
      }}
    >
      <label>
        Flag description <input value={text} onChange={(e) => setText(e.target.value)} />
      </label>
      <button type="submit">Save</button>
      {saved && <p>Saved: {saved}</p>}
    </form>
  );
}

beforeEach(() => {
  fetchMock.mockReset();
  window.localStorage.clear();
});

describe('an expiring session', () => {
  it('on a 401 signs in again in a dialog over the page, keeping the edit in progress', async () => {
    const old = jwt(Math.floor(Date.now() / 1000) + 3600);
    const fresh = jwt(Math.floor(Date.now() / 1000) + 7200, 'u1-new');
    const me = signedInAs('DEVELOPER', old);
    const logins: unknown[] = [];
    fetchMock.mockImplementation(
      router([
        ['GET', /\/auth\/me$/, () => json(200, me)],
        ['POST', /\/auth\/login$/, async (request) => {
          logins.push(await request.json());
          return json(200, { access_token: fresh, token_type: 'bearer', expires_in: 7200 });
        }],
        ['GET', /\/feature-flags\/$/, (request) =>
          request.headers.get('Authorization') === `Bearer ${fresh}` ? json(200, { items: [], total: 0, skip: 0, limit: 100 }) : json(401, { detail: 'Could not validate credentials' })],
      ]),
    );
    const user = userEvent.setup();
    renderWithProviders(<EditPage />);
    const field = await screen.findByLabelText('Flag description');
    await user.type(field, 'Half-written description');
    await user.click(screen.getByRole('button', { name: 'Save' }));

    const dialog = await screen.findByRole('dialog', { name: 'Your session has expired' });
    expect((screen.getByLabelText('Flag description') as HTMLInputElement).value).toBe('Half-written description');
    await user.type(screen.getByLabelText('Password'), 'secret');
    await user.click(screen.getAllByRole('button', { name: 'Sign in' })[0]);
    await screen.findByLabelText('Flag description');
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(dialog.isConnected).toBe(false);
    expect(logins).toEqual([{ email: 'dev@example.com', password: 'secret' }]);
    expect(window.localStorage.getItem('uplift.token')).toBe(fresh);

    // The edit is still there, and saving now works.
    expect((screen.getByLabelText('Flag description') as HTMLInputElement).value).toBe('Half-written description');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    expect(await screen.findByText('Saved: Half-written description')).toBeTruthy();
  });

  it('warns before the token expires and offers to sign in again', async () => {
    const soon = jwt(Math.floor(Date.now() / 1000) + 150);
    const me = signedInAs('DEVELOPER', soon);
    fetchMock.mockImplementation(
      router([
        ['GET', /\/auth\/me$/, () => json(200, me)],
        // As the API: a wrong password is 401; a login sent with the old bearer header would also count as a lost session.
        ['POST', /\/auth\/login$/, (request) => json(401, { detail: request.headers.get('Authorization') ? 'Session lost' : 'Incorrect email or password' })],
      ]),
    );
    const user = userEvent.setup();
    renderWithProviders(<EditPage />);
    const warning = await screen.findByText(/Your session ends in 3 minutes/);
    expect(warning).toBeTruthy();
    await user.click(screen.getByRole('button', { name: 'Sign in again' }));
    expect(await screen.findByRole('dialog', { name: 'Sign in again' })).toBeTruthy();
    // A wrong password is a message in the dialog; it does not turn the renewal into an expired session.
    await user.type(screen.getByLabelText('Password'), 'wrong');
    await user.click(screen.getAllByRole('button', { name: 'Sign in' })[0]);
    expect(await screen.findByText('Incorrect email or password')).toBeTruthy();
    expect(screen.getByRole('dialog', { name: 'Sign in again' })).toBeTruthy();
    await user.click(screen.getByRole('button', { name: 'Not now' }));
    expect(screen.queryByRole('dialog')).toBeNull();
  });
});
