import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';

// The client captures fetch when it is created, so the stub goes in before any import.
const fetchMock = vi.hoisted(() => {
  const mock = vi.fn<(request: Request) => Promise<Response>>();
  globalThis.fetch = mock as unknown as typeof fetch;
  return mock;
});

const { ExperimentForm } = await import('./ExperimentForm');
const { RouterProvider } = await import('../../router');

const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

function renderForm(experiment?: import('./hooks').Experiment) {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={client}>
      <RouterProvider>
        <ExperimentForm experiment={experiment} />
      </RouterProvider>
    </QueryClientProvider>,
  );
}

beforeEach(() => fetchMock.mockReset());

describe('<ExperimentForm>', () => {
  it("shows the API's 422 messages next to the fields their loc names, and the rest above the buttons", async () => {
    const bodies: unknown[] = [];
    fetchMock.mockImplementation(async (request) => {
      if (!request) return json(404, { detail: 'Not Found' });
      if (request.url.includes('/api/v1/segments')) return json(200, []);
      bodies.push(await request.json());
      return json(422, {
        detail: [
          { type: 'string_pattern_mismatch', loc: ['body', 'key'], msg: 'String should match pattern' },
          { type: 'greater_than_equal', loc: ['body', 'variants', 1, 'traffic_allocation'], msg: 'Input should be greater than or equal to 0' },
          { type: 'value_error', loc: ['body', 'status'], msg: 'status must be draft' },
        ],
      });
    });
    const user = userEvent.setup();
    renderForm();
    await user.type(screen.getByLabelText('Name'), 'Pricing page');
    expect((screen.getByLabelText('Key') as HTMLInputElement).value).toBe('pricing-page');
    await user.click(screen.getByRole('button', { name: 'Create experiment' }));

    const key = await screen.findByText('This value is not in the expected format.');
    expect(screen.getByLabelText('Key').getAttribute('aria-describedby')).toContain(key.id);
    expect(screen.getByLabelText('Key').getAttribute('aria-invalid')).toBe('true');
    const allocations = screen.getAllByLabelText('Allocation %');
    expect(allocations[1].getAttribute('aria-invalid')).toBe('true');
    expect(allocations[0].getAttribute('aria-invalid')).toBe('false');
    expect(screen.getAllByRole('listitem').map((li) => li.textContent)).toContain('status: status must be draft');
    expect(bodies[0]).toMatchObject({
      name: 'Pricing page',
      key: 'pricing-page',
      variants: [
        { name: 'control', is_control: true, traffic_allocation: 50 },
        { name: 'treatment', is_control: false, traffic_allocation: 50 },
      ],
      metrics: [{ name: 'Conversion', event_name: 'purchase', metric_type: 'conversion', is_primary: true, expected_effect: 0.1 }],
      targeting_rules: null,
      correction_method: 'benjamini_hochberg',
      confidence_level: 0.95,
    });
  });

  it('refuses to send allocations that do not add up to 100 and clears the message once they do', async () => {
    fetchMock.mockImplementation(async () => json(200, []));
    const user = userEvent.setup();
    renderForm();
    const [first] = screen.getAllByLabelText('Allocation %');
    await user.clear(first);
    await user.type(first, '70');
    await user.click(screen.getByRole('button', { name: 'Create experiment' }));
    expect(screen.getByText('Allocations add up to 120%; they must add up to 100%.')).toBeTruthy();
    expect(fetchMock.mock.calls.map(([request]) => request?.url ?? '').filter((url) => url.endsWith('/api/v1/experiments/'))).toEqual([]);
    await user.click(screen.getByRole('button', { name: 'Split evenly' }));
    expect(screen.queryByText(/they must add up to 100%/)).toBeNull();
    expect(screen.getByText('100%')).toBeTruthy();
  });
});

describe('<ExperimentForm> checks in the browser', () => {
  it('says what is wrong with the key in words before sending anything', async () => {
    fetchMock.mockImplementation(async () => json(200, []));
    const user = userEvent.setup();
    renderForm();
    await user.type(screen.getByLabelText('Name'), 'Pricing page');
    const key = screen.getByLabelText('Key');
    await user.clear(key);
    await user.type(key, '-pricing page');
    await user.click(screen.getByRole('button', { name: 'Create experiment' }));
    expect(screen.getByText('Start with a letter or digit, then use only letters, digits and _ . : - (no spaces).')).toBeTruthy();
    expect(fetchMock.mock.calls.map(([request]) => request?.url ?? '').filter((url) => url.endsWith('/api/v1/experiments/'))).toEqual([]);
    await user.clear(key);
    await user.type(key, 'pricing-page');
    expect(screen.queryByText(/Start with a letter or digit/)).toBeNull();
  });
});

describe('<ExperimentForm> metrics from the library', () => {
  it("uses a library definition instead of typed fields, shows its kind, and sends its id; inline metrics keep working", async () => {
    const { metricDefinition } = await import('../../test/fixtures');
    const ratio = metricDefinition();
    const p90 = metricDefinition({ id: '66666666-6666-4666-8666-000000000002', name: 'Page load p90', kind: 'quantile', event_name: 'load_time', aggregate: 'sum', numerator: null, denominator: null, quantile: 0.9 });
    const bodies: unknown[] = [];
    fetchMock.mockImplementation(async (request) => {
      if (!request) return json(404, { detail: 'Not Found' });
      if (request.url.includes('/api/v1/metric-definitions')) return json(200, [ratio, p90]);
      if (request.method === 'POST') {
        bodies.push(await request.json());
        return json(422, { detail: [{ type: 'value_error', loc: ['body', 'metrics', 1, 'metric_definition_id'], msg: 'Value error, Unknown metric definition' }] });
      }
      return json(200, []);
    });
    const user = userEvent.setup();
    renderForm();
    await user.type(screen.getByLabelText('Name'), 'Pricing page');
    await user.click(screen.getByRole('button', { name: '+ Add metric' }));
    await waitFor(() => expect(screen.getByLabelText('Metric 2 from the library').textContent).toContain('Page load p90 (quantile)'));
    await user.selectOptions(screen.getByLabelText('Metric 2 from the library'), 'Page load p90 (quantile)');
    // The typed fields give way to what the definition measures, with its kind.
    expect(screen.getAllByLabelText('Event name')).toHaveLength(1);
    expect(screen.getByText('quantile').className).toContain('badge');
    expect(screen.getByText(/p90 of load_time/)).toBeTruthy();
    expect((screen.getByLabelText('Metric 2 name') as HTMLInputElement).value).toBe('Page load p90');
    await user.click(screen.getByRole('button', { name: 'Create experiment' }));

    expect(await screen.findByText('Unknown metric definition.')).toBeTruthy();
    expect(screen.getByLabelText('Metric 2 from the library').getAttribute('aria-invalid')).toBe('true');
    expect(bodies[0]).toMatchObject({
      metrics: [
        { name: 'Conversion', event_name: 'purchase', metric_type: 'conversion', is_primary: true },
        { name: 'Page load p90', event_name: 'load_time', metric_type: 'revenue', is_primary: false, metric_definition_id: p90.id },
      ],
    });
    expect((bodies[0] as { metrics: object[] }).metrics[0]).not.toHaveProperty('metric_definition_id');
  });

  it('keeps the library reference of a saved metric when the experiment is edited', async () => {
    const { experiment, metricDefinition } = await import('../../test/fixtures');
    const ratio = metricDefinition();
    const saved = experiment();
    saved.metrics = [{ ...saved.metrics[0], name: 'Revenue per page view', event_name: 'revenue', metric_type: 'revenue', metric_definition_id: ratio.id }];
    const bodies: unknown[] = [];
    fetchMock.mockImplementation(async (request) => {
      if (!request) return json(404, { detail: 'Not Found' });
      if (request.url.includes('/api/v1/metric-definitions')) return json(200, [ratio]);
      if (request.method === 'PUT') {
        bodies.push(await request.json());
        return json(200, saved);
      }
      return json(200, []);
    });
    const user = userEvent.setup();
    renderForm(saved);
    await screen.findByText('revenue per page_view');
    expect((screen.getByLabelText('Metric 1 from the library') as HTMLSelectElement).value).toBe(ratio.id);
    await user.click(screen.getByRole('button', { name: 'Save changes' }));
    await waitFor(() => expect(bodies).toHaveLength(1));
    expect(bodies[0]).toMatchObject({ metrics: [{ name: 'Revenue per page view', event_name: 'revenue', metric_definition_id: ratio.id, is_primary: true }] });
  });

  it('asks for the name and event of a typed metric before sending', async () => {
    fetchMock.mockImplementation(async () => json(200, []));
    const user = userEvent.setup();
    renderForm();
    await user.type(screen.getByLabelText('Name'), 'Pricing page');
    await user.click(screen.getByRole('button', { name: '+ Add metric' }));
    await user.click(screen.getByRole('button', { name: 'Create experiment' }));
    expect(screen.getByLabelText('Metric 2 name').getAttribute('aria-invalid')).toBe('true');
    expect(screen.getAllByLabelText('Event name')[1].getAttribute('aria-invalid')).toBe('true');
    expect(fetchMock.mock.calls.filter(([request]) => request?.method === 'POST')).toEqual([]);
  });
});
