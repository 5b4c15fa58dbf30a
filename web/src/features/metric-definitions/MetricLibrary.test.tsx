import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

const fetchMock = vi.hoisted(() => {
  const mock = vi.fn<(request: Request) => Promise<Response>>();
  globalThis.fetch = mock as unknown as typeof fetch;
  return mock;
});

const { MetricLibrary } = await import('./MetricLibrary');
const { MetricDefinitionPage, NewMetricDefinition } = await import('./MetricDefinitionForm');
const { json, renderWithProviders, router, signedInAs } = await import('../../test/harness');
type Route = import('../../test/harness').Route;
const { DEFINITION_ID, metricDefinition } = await import('../../test/fixtures');

const ratio = metricDefinition();
const p90 = metricDefinition({
  id: '66666666-6666-4666-8666-000000000002',
  name: 'Page load p90',
  kind: 'quantile',
  event_name: 'load_time',
  aggregate: 'sum',
  numerator: null,
  denominator: null,
  quantile: 0.9,
  tags: ['speed'],
  owner: 'Web platform',
  version: 3,
});

/** The /auth/me answer for `role` plus the routes of the test; the requests the dashboard sent are kept. */
function stub(role: Parameters<typeof signedInAs>[0], routes: Route[]) {
  const me = signedInAs(role);
  const sent: Array<{ method: string; path: string; body: unknown }> = [];
  const answer = router([['GET', /\/auth\/me$/, () => json(200, me)], ...routes]);
  fetchMock.mockImplementation(async (request) => {
    const path = new URL(request.url).pathname;
    if (request.method !== 'GET') sent.push({ method: request.method, path, body: request.method === 'DELETE' ? null : await request.clone().json() });
    return answer(request);
  });
  return sent;
}

beforeEach(() => {
  fetchMock.mockReset();
  window.localStorage.clear();
  window.history.replaceState(null, '', '/');
});
afterEach(() => vi.unstubAllGlobals());

describe('<MetricLibrary>', () => {
  it('lists each metric with its kind, what it measures, version and owner, and searches by name or tag', async () => {
    stub('VIEWER', [['GET', /\/metric-definitions$/, () => json(200, [p90, ratio])]]);
    const user = userEvent.setup({ delay: null });
    renderWithProviders(<MetricLibrary />);
    const row = (await screen.findByRole('link', { name: 'Page load p90' })).closest('tr') as HTMLElement;
    expect(within(row).getByText('quantile').className).toContain('badge');
    expect(row.textContent).toContain('p90 of load_time (value sum per user)');
    expect(row.textContent).toContain('v3');
    expect(row.textContent).toContain('Web platform');
    expect(screen.getByRole('link', { name: 'Revenue per page view' }).closest('tr')?.textContent).toContain('revenue per page_view');

    await user.type(screen.getByPlaceholderText('Search by name or tag'), 'SPEED');
    expect(screen.getByRole('link', { name: 'Page load p90' })).toBeTruthy();
    expect(screen.queryByRole('link', { name: 'Revenue per page view' })).toBeNull();
    await user.clear(screen.getByPlaceholderText('Search by name or tag'));
    await user.selectOptions(screen.getByLabelText('Filter by kind'), 'ratio');
    expect(screen.queryByRole('link', { name: 'Page load p90' })).toBeNull();
    await user.type(screen.getByPlaceholderText('Search by name or tag'), 'nothing like it');
    expect(screen.getByText('No metric matches these filters.')).toBeTruthy();
    // A viewer reads the library but is not offered to add to it.
    expect(screen.queryByRole('link', { name: 'New metric' })).toBeNull();
  });

  it('offers "New metric" to an analyst', async () => {
    stub('ANALYST', [['GET', /\/metric-definitions$/, () => json(200, [])]]);
    renderWithProviders(<MetricLibrary />);
    expect(await screen.findByRole('link', { name: 'New metric' })).toBeTruthy();
    expect(screen.getByText('No metrics defined yet.')).toBeTruthy();
  });
});

describe('<NewMetricDefinition>', () => {
  it('says what is missing in words before sending anything, then sends the ratio as defined', async () => {
    const sent = stub('ANALYST', [['POST', /\/metric-definitions$/, () => json(201, ratio)]]);
    const user = userEvent.setup({ delay: null });
    renderWithProviders(<NewMetricDefinition />);
    await user.selectOptions(screen.getByLabelText('Kind'), 'ratio');
    await user.click(screen.getByRole('button', { name: 'Create metric' }));
    expect(screen.getByLabelText('Name').getAttribute('aria-invalid')).toBe('true');
    expect(screen.getByLabelText('Numerator event').getAttribute('aria-invalid')).toBe('true');
    expect(screen.getByLabelText('Denominator event').getAttribute('aria-invalid')).toBe('true');
    expect(screen.getAllByText('This field is required.')).toHaveLength(3);
    expect(sent).toEqual([]);

    await user.type(screen.getByLabelText('Name'), 'Revenue per page view');
    await user.type(screen.getByLabelText('Numerator event'), 'revenue');
    await user.type(screen.getByLabelText('Denominator event'), 'page_view');
    await user.selectOptions(screen.getByLabelText('Capping'), 'percentile');
    const p = screen.getByLabelText('Capping percentile p');
    await user.clear(p);
    await user.type(p, '1.5');
    await user.click(screen.getByRole('button', { name: 'Create metric' }));
    expect(screen.getByText('Enter a number between 0 and 1 (not 0 or 1), e.g. 0.999.')).toBeTruthy();
    expect(sent).toEqual([]);
    await user.clear(p);
    await user.type(p, '0.99');
    await user.type(screen.getByLabelText('Tags'), 'revenue, checkout');
    await user.click(screen.getByRole('button', { name: 'Create metric' }));
    await waitFor(() => expect(sent).toHaveLength(1));
    expect(sent[0].body).toEqual({
      name: 'Revenue per page view',
      kind: 'ratio',
      description: null,
      numerator: { event_name: 'revenue', aggregate: 'sum' },
      denominator: { event_name: 'page_view', aggregate: 'count' },
      capping: { type: 'percentile', p: 0.99 },
      higher_is_better: true,
      tags: ['revenue', 'checkout'],
    });
    await waitFor(() => expect(window.location.pathname).toBe(`/metrics/${DEFINITION_ID}`));
  });

  it("shows the API's messages at the fields they name", async () => {
    stub('ANALYST', [
      ['POST', /\/metric-definitions$/, () => json(409, { detail: 'A metric definition with this name already exists' })],
    ]);
    const user = userEvent.setup({ delay: null });
    renderWithProviders(<NewMetricDefinition />);
    await user.type(screen.getByLabelText('Name'), 'Purchased');
    await user.type(screen.getByLabelText('Event name'), 'purchase');
    await user.click(screen.getByRole('button', { name: 'Create metric' }));
    expect(await screen.findByText('A metric definition with this name already exists')).toBeTruthy();
  });
});

describe('<MetricDefinitionPage>', () => {
  const path = new RegExp(`/metric-definitions/${DEFINITION_ID}$`);

  it('is read-only for a viewer', async () => {
    stub('VIEWER', [['GET', path, () => json(200, ratio)]]);
    renderWithProviders(<MetricDefinitionPage id={DEFINITION_ID} />);
    await screen.findByText(/Read only/);
    expect(screen.getByLabelText('Name').closest('fieldset')?.disabled).toBe(true);
    expect(screen.queryByRole('button', { name: 'Save metric' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Delete' })).toBeNull();
  });

  it('saves an edit as the next version', async () => {
    const sent = stub('ANALYST', [
      ['GET', path, () => json(200, ratio)],
      ['PUT', path, () => json(200, { ...ratio, capping: { type: 'absolute', value: 500 }, version: 2 })],
    ]);
    const user = userEvent.setup({ delay: null });
    renderWithProviders(<MetricDefinitionPage id={DEFINITION_ID} />);
    await user.selectOptions(await screen.findByLabelText('Capping'), 'absolute');
    await user.type(screen.getByLabelText('Cap per user'), '500');
    await user.click(screen.getByRole('button', { name: 'Save metric' }));
    expect(await screen.findByText('Saved as version 2.')).toBeTruthy();
    expect(sent[0]).toMatchObject({ method: 'PUT', body: { kind: 'ratio', capping: { type: 'absolute', value: 500 }, owner: 'Growth team' } });
  });

  it('says which running experiments keep a metric from being deleted', async () => {
    stub('DEVELOPER', [
      ['GET', path, () => json(200, ratio)],
      [
        'DELETE',
        path,
        () =>
          json(409, {
            detail: {
              code: 'metric_definition_in_use',
              message: 'Metric definition is used by a running experiment; complete the experiment or remove the metric from it first',
              experiments: [
                { id: '11111111-1111-4111-8111-000000000001', key: 'checkout', name: 'Checkout test', status: 'active' },
                { id: '11111111-1111-4111-8111-000000000002', key: 'pricing', name: 'Pricing test', status: 'paused' },
              ],
            },
          }),
      ],
    ]);
    vi.stubGlobal('confirm', () => true);
    const user = userEvent.setup({ delay: null });
    renderWithProviders(<MetricDefinitionPage id={DEFINITION_ID} />);
    await user.click(await screen.findByRole('button', { name: 'Delete' }));
    const alert = (await screen.findByText(/cannot be deleted/)).closest('[role="alert"]') as HTMLElement;
    expect(alert.textContent).toContain('This metric cannot be deleted: these running experiments use it. Complete them or remove the metric from them first.');
    expect(within(alert).getByRole('link', { name: 'Checkout test' }).getAttribute('href')).toBe('/experiments/11111111-1111-4111-8111-000000000001');
    expect(alert.textContent).toContain('Pricing test (paused)');
  });
});
