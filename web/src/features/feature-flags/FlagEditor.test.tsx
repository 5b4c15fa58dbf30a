import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';

const fetchMock = vi.hoisted(() => {
  const mock = vi.fn<(request: Request) => Promise<Response>>();
  globalThis.fetch = mock as unknown as typeof fetch;
  return mock;
});

const { FlagEditor } = await import('./FlagEditor');
const { json, renderWithProviders, router } = await import('../../test/harness');
const { flag, FLAG_ID } = await import('../../test/fixtures');

const sent = (method: string) => fetchMock.mock.calls.map(([r]) => r).filter((r) => r instanceof Request && r.method === method && r.url.includes('/feature-flags/'));

beforeEach(() => {
  fetchMock.mockReset();
  window.localStorage.clear();
});

describe('<FlagEditor>', () => {
  it('checks the key in the browser and says it in words, sending nothing', async () => {
    fetchMock.mockImplementation(router([['GET', /\/segments$/, () => json(200, [])]]));
    const user = userEvent.setup();
    renderWithProviders(<FlagEditor />);
    await user.type(screen.getByLabelText('Name'), 'New checkout');
    await user.type(screen.getByLabelText('Key'), 'new checkout!');
    await user.click(screen.getByRole('button', { name: 'Create flag' }));
    expect(await screen.findByText('Use only letters, digits and the characters _ . : - (no spaces).')).toBeTruthy();
    expect(screen.getByLabelText('Key').getAttribute('aria-invalid')).toBe('true');
    expect(sent('POST')).toEqual([]);
    expect(document.body.textContent).not.toMatch(/should match pattern/);
  });

  it('shows the API\'s pattern message in words when the server refuses the key', async () => {
    fetchMock.mockImplementation(
      router([
        ['GET', /\/segments$/, () => json(200, [])],
        ['POST', /\/feature-flags\/$/, () => json(422, { detail: [{ type: 'string_pattern_mismatch', loc: ['body', 'key'], msg: "String should match pattern '^[A-Za-z0-9_.:-]+$'", ctx: { pattern: '^[A-Za-z0-9_.:-]+$' } }] })],
      ]),
    );
    const user = userEvent.setup();
    renderWithProviders(<FlagEditor />);
    await user.type(screen.getByLabelText('Name'), 'New checkout');
    await user.type(screen.getByLabelText('Key'), 'new-checkout');
    await user.click(screen.getByRole('button', { name: 'Create flag' }));
    expect(await screen.findByText('Use only letters, digits and the characters _ . : - (no spaces).')).toBeTruthy();
  });

  it('edits the description of an existing flag and confirms "Save flag" with a toast that outlives the remount', async () => {
    let current = flag();
    fetchMock.mockImplementation(
      router([
        ['GET', /\/segments$/, () => json(200, [])],
        ['PUT', /\/feature-flags\/[^/]+$/, async (request) => {
          const body = (await request.json()) as { description?: string };
          current = flag({ ...current, description: body.description ?? current.description, updated_at: '2026-11-02T10:00:00.000Z' });
          return json(200, current);
        }],
      ]),
    );
    const user = userEvent.setup();
    // As FlagPage does: the editor is keyed by updated_at, so a save remounts it.
    renderWithProviders(<FlagEditor key={current.updated_at} flag={current} />);
    const description = screen.getByLabelText('Description') as HTMLTextAreaElement;
    expect(description.disabled).toBe(false);
    await user.clear(description);
    await user.type(description, 'Checkout on one page, with saved cards');
    await user.click(screen.getByRole('button', { name: 'Save flag' }));
    expect(await screen.findByText('Flag “New checkout” saved.')).toBeTruthy();
    const [put] = sent('PUT');
    expect(put.url).toContain(FLAG_ID);
    expect(current.description).toBe('Checkout on one page, with saved cards');
    // The confirmation lives outside the form, so the editor remounting on the new updated_at does not erase it.
    expect(screen.getByText('Flag “New checkout” saved.').closest('form')).toBeNull();
  });
});
