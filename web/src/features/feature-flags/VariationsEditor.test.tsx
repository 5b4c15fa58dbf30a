import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import type { ReactNode } from 'react';
import { beforeEach, describe, expect, it, vi } from 'vitest';

// The client captures fetch when it is created, so the stub goes in before any import.
const fetchMock = vi.hoisted(() => {
  const mock = vi.fn<(request: Request) => Promise<Response>>();
  globalThis.fetch = mock as unknown as typeof fetch;
  return mock;
});

const { FlagEditor } = await import('./FlagEditor');
const { EvaluatePanel } = await import('./EvaluatePanel');
const { RouterProvider } = await import('../../router');
const { renderWithProviders, router, signedInAs } = await import('../../test/harness');
const { addVariation, newTypedDraft, parseValue, removeVariation } = await import('./typed-draft');
type Flag = import('./hooks').Flag;

const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

function renderWith(children: ReactNode) {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={client}>
      <RouterProvider>{children}</RouterProvider>
    </QueryClientProvider>,
  );
}

/** Answers segments with none and records every write (method, path, body); `answer` decides the write's reply. */
function serve(answer: (body: unknown) => Response = () => json(422, { detail: [] })) {
  const writes: Array<{ method: string; path: string; body: unknown }> = [];
  fetchMock.mockImplementation(async (request) => {
    if (!request) return json(404, { detail: 'Not Found' });
    if (request.method === 'GET') return json(200, []);
    const body: unknown = await request.json();
    writes.push({ method: request.method, path: new URL(request.url).pathname, body });
    return answer(body);
  });
  return writes;
}

async function newFlag(valueType: string) {
  const user = userEvent.setup();
  renderWith(<FlagEditor />);
  await user.type(screen.getByLabelText('Name'), 'Checkout copy');
  await user.type(screen.getByLabelText('Key'), 'checkout-copy');
  await user.selectOptions(screen.getByLabelText('Value type'), valueType);
  return user;
}

async function replace(user: ReturnType<typeof userEvent.setup>, field: HTMLElement, text: string) {
  await user.clear(field);
  await user.click(field);
  await user.paste(text);
}

const invalid = (field: HTMLElement) => field.getAttribute('aria-invalid') === 'true';
/** The message a field is described by (its error), or ''. */
const messageOf = (field: HTMLElement) =>
  (field.getAttribute('aria-describedby') ?? '')
    .split(' ')
    .map((id) => document.getElementById(id))
    .filter((el) => el?.classList.contains('field-error'))
    .map((el) => el?.textContent)
    .join(' ');

beforeEach(() => fetchMock.mockReset());

describe('typed flag editor', () => {
  it('checks a JSON value as it is typed: invalid JSON, not an object or array, over 32 KiB', async () => {
    const writes = serve();
    const user = await newFlag('json');
    const value = screen.getByLabelText('Variation 1 value (JSON)');
    expect(invalid(value)).toBe(false);

    await replace(user, value, '{"label": ');
    expect(invalid(value)).toBe(true);
    expect(messageOf(value)).toMatch(/^This is not valid JSON: /);

    await replace(user, value, '"Buy now"');
    expect(messageOf(value)).toBe('A JSON value must be an object or an array, for example {"color": "blue"} or ["a", "b"].');

    await user.click(screen.getByRole('button', { name: 'Create flag' }));
    expect(screen.getByText('Fix the marked variation fields before saving.')).toBeTruthy();
    expect(writes).toEqual([]);

    await replace(user, value, '{"label": "Buy now"}');
    expect(invalid(value)).toBe(false);
    expect(screen.queryByText('Fix the marked variation fields before saving.')).toBeNull();

    const big = JSON.stringify({ text: 'x'.repeat(32 * 1024) });
    expect(parseValue('json', big)).toEqual({ problem: `At most 32 KiB (32768 bytes) as JSON; this value is ${big.length} bytes.` });
    expect(parseValue('json', '[1, 2]')).toEqual({ value: [1, 2] });
    expect(parseValue('number', 'twelve')).toEqual({ problem: 'Enter a number, for example 42 or 0.5.' });
  });

  it('shows the running total of a split and refuses to save until the weights add up to 100', async () => {
    const writes = serve((body) => json(201, { ...(body as object), id: '8d0c6a52-7f3e-4a43-9a64-0d8c9c3c7a11' }));
    const user = await newFlag('string');
    await user.type(screen.getByLabelText('Variation 1 value'), 'Buy now');
    await user.type(screen.getByLabelText('Variation 2 value'), 'Place order');
    await user.click(screen.getByLabelText('A split (sticky per user)'));
    const split = screen.getByRole('group', { name: 'Default split' });
    expect(within(split).getByText('100%')).toBeTruthy();

    const first = within(split).getByLabelText('Share 1 weight %');
    await user.clear(first);
    await user.type(first, '40');
    expect(split.querySelector('.allocation-total')?.textContent).toBe('Total: 90% (must be 100%)');
    expect(within(split).getByText('Weights add up to 90%; they must add up to 100%.')).toBeTruthy();
    await user.click(screen.getByRole('button', { name: 'Create flag' }));
    expect(writes).toEqual([]);

    await user.click(within(split).getByRole('button', { name: 'Split evenly' }));
    expect(split.querySelector('.allocation-total')?.textContent).toBe('Total: 100% ✓');
    await user.click(screen.getByRole('button', { name: 'Create flag' }));
    await vi.waitFor(() => expect(writes).toHaveLength(1));
    expect(writes[0].body).toEqual({
      key: 'checkout-copy',
      name: 'Checkout copy',
      rollout_percentage: 100,
      value_type: 'string',
      variations: [
        { key: 'variation-1', value: 'Buy now' },
        { key: 'variation-2', value: 'Place order' },
      ],
      variation_split: [
        { variation: 'variation-1', weight: 50 },
        { variation: 'variation-2', weight: 50 },
      ],
    });
  });

  it('marks duplicate keys and sends nothing while two variations share one', async () => {
    const writes = serve();
    const user = await newFlag('number');
    const second = screen.getByLabelText('Variation 2 key');
    await user.clear(second);
    await user.type(second, 'variation-1');
    expect(messageOf(second)).toBe('Variation keys must be unique in the flag.');
    expect(invalid(screen.getByLabelText('Variation 1 key'))).toBe(false);
    await user.click(screen.getByRole('button', { name: 'Create flag' }));
    expect(writes).toEqual([]);
    await user.type(second, '0');
    expect(invalid(second)).toBe(false);
  });

  it('keeps a variation that a rule still serves, says where, and removes it once nothing does', async () => {
    serve();
    const user = await newFlag('number');
    await user.click(screen.getByRole('button', { name: '+ Add variation' }));
    await user.click(screen.getByRole('button', { name: '+ Add variation rule' }));
    const rule = screen.getByRole('group', { name: 'Variation rule 1' });
    await user.selectOptions(within(rule).getByLabelText('Rule 1 variation'), within(rule).getByRole('option', { name: 'variation-3' }));

    await user.click(screen.getByRole('button', { name: 'Remove variation variation-3' }));
    expect(screen.getByRole('group', { name: 'Variation 3' })).toBeTruthy();
    expect(within(screen.getByRole('group', { name: 'Variation 3' })).getByRole('alert').textContent).toBe(
      '“variation-3” is still served by variation rule 1: serve another variation there before removing it.',
    );

    // Renaming the key renames it where it is served.
    const key = screen.getByLabelText('Variation 3 key');
    await user.clear(key);
    await user.type(key, 'big');
    expect(within(rule).getByRole('option', { name: 'big', selected: true })).toBeTruthy();

    await user.selectOptions(within(rule).getByLabelText('Rule 1 variation'), within(rule).getByRole('option', { name: 'variation-1' }));
    await user.click(screen.getByRole('button', { name: 'Remove variation big' }));
    expect(screen.queryByRole('group', { name: 'Variation 3' })).toBeNull();
    expect(screen.getAllByRole('group', { name: /^Variation \d$/ })).toHaveLength(2);
  });

  it('drops a removed variation from splits not in use, so switching back to them names no missing variation', () => {
    const draft = addVariation(newTypedDraft('string'));
    const withRule = { ...draft, rules: [{ rules: { logical_operator: 'AND' as const, groups: [] }, serve: 'variation' as const, variation: 0, split: [{ variation: 0, weight: '50' }, { variation: 2, weight: '50' }] }] };
    const removed = removeVariation(withRule, 2);
    expect('draft' in removed && removed.draft.rules[0].split).toEqual([{ variation: 0, weight: '50' }]);
    expect('draft' in removed && removed.draft.variations.map((v) => v.key)).toEqual(['variation-1', 'variation-2']);
    expect(removeVariation({ ...withRule, offVariation: 2, serve: 'split', split: [{ variation: 2, weight: '100' }] }, 2)).toEqual({
      refused: '“variation-3” is still served by the default split and the off variation: serve another variation there before removing it.',
    });
  });

  it("shows the server's 422 at the field it names, and lists what no field shows", async () => {
    const writes = serve(() =>
      json(422, {
        detail: [
          { type: 'value_error', loc: ['body', 'variations', 1, 'value'], msg: 'value must be a JSON object or array' },
          { type: 'value_error', loc: ['body', 'variation_rules', 0, 'targeting_rules'], msg: 'unknown operator' },
          { type: 'value_error', loc: ['body', 'off_variation'], msg: 'names no variation of this flag' },
          { type: 'value_error', loc: ['body', 'variations', 0, 'colour'], msg: 'Unexpected property' },
        ],
      }),
    );
    const user = await newFlag('json');
    await replace(user, screen.getByLabelText('Variation 1 value (JSON)'), '{"label": "Buy now"}');
    await replace(user, screen.getByLabelText('Variation 2 value (JSON)'), '["a", 1]');
    const off = screen.getByLabelText('Off variation');
    await user.selectOptions(off, within(off).getByRole('option', { name: 'variation-2' }));
    await user.click(screen.getByRole('button', { name: '+ Add variation rule' }));
    const rule = screen.getByRole('group', { name: 'Variation rule 1' });
    await user.click(within(rule).getByLabelText('A split'));
    await user.click(within(rule).getByRole('button', { name: '+ Add rule group' }));
    await user.type(within(rule).getByPlaceholderText('attribute, e.g. country'), 'country');
    await user.type(within(rule).getByPlaceholderText('value'), 'DE');
    await user.click(screen.getByRole('button', { name: 'Create flag' }));

    expect(await screen.findByText('value must be a JSON object or array')).toBeTruthy();
    expect(messageOf(screen.getByLabelText('Variation 2 value (JSON)'))).toBe('value must be a JSON object or array');
    expect(messageOf(screen.getByLabelText('Off variation'))).toBe('names no variation of this flag');
    expect(within(rule).getByText('unknown operator')).toBeTruthy();
    expect(screen.getAllByRole('listitem').map((li) => li.textContent)).toEqual(['variations.0.colour: Unexpected property']);
    expect(writes[0].body).toEqual({
      key: 'checkout-copy',
      name: 'Checkout copy',
      rollout_percentage: 100,
      value_type: 'json',
      variations: [
        { key: 'variation-1', value: { label: 'Buy now' } },
        { key: 'variation-2', value: ['a', 1] },
      ],
      default_variation: 'variation-1',
      off_variation: 'variation-2',
      variation_rules: [
        {
          targeting_rules: { logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'country', operator: 'equals', value: 'DE' }] }] },
          split: [
            { variation: 'variation-1', weight: 50 },
            { variation: 'variation-2', weight: 50 },
          ],
        },
      ],
    });
  });
});

const typedFlag: Flag = {
  id: '8d0c6a52-7f3e-4a43-9a64-0d8c9c3c7a11',
  key: 'banner',
  name: 'Banner',
  description: null,
  status: 'active',
  is_active: true,
  rollout_percentage: 100,
  targeting_rules: null,
  default_value: false,
  tags: null,
  value_type: 'json',
  variations: [
    { key: 'blue', value: { color: 'blue', size: 2 }, name: 'Blue' },
    { key: 'red', value: { color: 'red' } },
  ],
  default_variation: null,
  off_variation: 'red',
  variation_rules: [{ targeting_rules: { logical_operator: 'AND', groups: [] }, variation: 'blue' }],
  variation_split: [
    { variation: 'blue', weight: 30 },
    { variation: 'red', weight: 70 },
  ],
  owner_id: null,
  created_at: '2026-11-27T09:00:00.000Z',
  updated_at: '2026-11-27T09:00:00.000Z',
};

describe('typed flag page', () => {
  it('edits a stored typed flag with its value type read-only and sends every typed field back', async () => {
    const writes = serve(() => json(422, { detail: [{ type: 'value_error', loc: ['body', 'variations'], msg: 'a variation that default_variation, off_variation, a variation rule or a split names cannot be removed' }] }));
    const user = userEvent.setup();
    renderWith(<FlagEditor flag={typedFlag} />);
    expect(screen.queryByLabelText('Value type')).toBeNull();
    expect(screen.getByText('(fixed when the flag was created)').parentElement?.textContent).toContain('Value type json');
    expect((screen.getByLabelText('Variation 1 value (JSON)') as HTMLTextAreaElement).value).toBe('{\n  "color": "blue",\n  "size": 2\n}');
    expect(screen.getByRole('group', { name: 'Default split' })).toBeTruthy();

    await user.click(screen.getByRole('button', { name: 'Save flag' }));
    expect(await screen.findByText('a variation that default_variation, off_variation, a variation rule or a split names cannot be removed')).toBeTruthy();
    expect(writes[0]).toMatchObject({ method: 'PUT', path: `/api/v1/feature-flags/${typedFlag.id}` });
    expect(writes[0].body).toMatchObject({
      variations: [
        { key: 'blue', value: { color: 'blue', size: 2 }, name: 'Blue' },
        { key: 'red', value: { color: 'red' } },
      ],
      variation_split: typedFlag.variation_split,
      off_variation: 'red',
      variation_rules: typedFlag.variation_rules,
    });
    expect(writes[0].body).not.toHaveProperty('value_type');
    expect(writes[0].body).not.toHaveProperty('default_variation');
  });

  it('shows the variation served and its value, pretty-printed for JSON', async () => {
    // The panel evaluates with the key it keeps per signed-in account (evaluate-key.ts).
    const me = signedInAs('DEVELOPER');
    window.localStorage.setItem(`uplift.evaluate-key.${me.id}`, 'upk_test');
    fetchMock.mockImplementation(
      router([
        ['GET', /\/auth\/me$/, () => json(200, me)],
        ['GET', /\/segments$/, () => json(200, [])],
        ['GET', /\/api-keys$/, () => json(200, [])],
        ['POST', /\/feature-flags\/evaluate\//, () =>
          json(200, { flag_key: 'banner', enabled: true, reason: 'rollout', variation: 'blue', value: { color: 'blue', size: 2 }, variation_reason: 'split' })],
      ]),
    );
    const user = userEvent.setup();
    renderWithProviders(<EvaluatePanel flag={typedFlag} />);
    // Enabled once the account (and so its kept key) has loaded.
    await waitFor(() => expect(screen.getByRole('button', { name: 'Evaluate' })).toHaveProperty('disabled', false));
    await user.click(screen.getByRole('button', { name: 'Evaluate' }));
    expect((await screen.findByLabelText('Value')).textContent).toBe('{\n  "color": "blue",\n  "size": 2\n}');
    expect(screen.getByText('blue', { selector: 'code' }).parentElement?.textContent).toBe('Variation blue · from the split');
  });
});
