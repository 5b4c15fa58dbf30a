import { afterAll, beforeAll, expect, it } from 'vitest';
import { screenshot, signIn, startWeb, type WebHarness } from './browser.js';

/**
 * Issue 31's dashboard defects against the real API (the component tests in web/ cover each one in isolation):
 * the owner after Start, empty charts, an editable description with a confirmation, segment names in an
 * evaluation, one API key for the evaluate panel across tabs, the flag's history, and mail not configured; and the
 * results page keeping up by itself while it is open.
 */
let web: WebHarness;
beforeAll(async () => {
  web = await startWeb();
}, 120_000);
afterAll(() => web?.close());

/** An A/B experiment, control and treatment half and half, on purchases. */
const abTest = (name: string, key: string) => ({
  name,
  key,
  variants: [
    { name: 'control', is_control: true, traffic_allocation: 50 },
    { name: 'treatment', is_control: false, traffic_allocation: 50 },
  ],
  metrics: [{ name: 'Purchase', event_name: 'purchase', metric_type: 'conversion', is_primary: true }],
});

it('keeps the owner after Start, draws no 0-400 % chart, names segments, reuses one panel key and shows history', async () => {
  const { t, baseUrl, browser } = web;
  const developer = await t.user({ role: 'DEVELOPER' });
  const created = await t.call('POST', '/api/v1/experiments/', developer, abTest('Owner check', 'owner-check'));
  expect(created.statusCode).toBe(201);
  const experiment = created.json();
  const owner = (await t.call('GET', `/api/v1/experiments/${experiment.id}`, developer)).json().owner_name as string;
  expect(owner).toBeTruthy();

  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await signIn(page, baseUrl, developer);
  await page.goto(`${baseUrl}/experiments/${experiment.id}`);
  await page.getByRole('button', { name: 'Start' }).click();
  await page.getByRole('button', { name: 'Pause' }).waitFor();
  const meta = page.locator('p.meta');
  await meta.getByText('active', { exact: true }).waitFor();
  expect(await meta.textContent()).toContain(`owner ${owner}`);
  // No users yet: the charts say so instead of drawing an empty 0-400 % axis.
  await page.getByRole('figure', { name: /conversion rate by variant/ }).getByText('No users yet.').waitFor();
  expect(await page.locator('.recharts-cartesian-axis-tick-value', { hasText: '400.0%' }).count()).toBe(0);
  await screenshot(page, 'experiment-started-no-data');

  // A flag targeting a segment.
  const segment = (await t.call('POST', '/api/v1/segments', developer, {
    name: 'Canadian shoppers',
    kind: 'rules',
    rules: { logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'country', operator: 'equals', value: 'CA' }] }] },
  })).json();
  const flag = (await t.call('POST', '/api/v1/feature-flags/', developer, {
    key: 'ca-checkout',
    name: 'CA checkout',
    description: 'First words',
    is_active: true,
    rollout_percentage: 100,
    targeting_rules: { logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'segment', operator: 'in_segment', value: segment.id }] }] },
  })).json();

  await page.getByRole('link', { name: 'Feature flags' }).click();
  await page.locator('.list-count', { hasText: /^1 flag$/ }).waitFor();
  await page.goto(`${baseUrl}/flags/${flag.id}`);
  const description = page.getByLabel('Description');
  await description.fill('Checkout for Canadian shoppers');
  await page.getByRole('button', { name: 'Save flag' }).click();
  await page.locator('.toasts').getByText('Flag “CA checkout” saved.').waitFor();
  expect((await t.call('GET', `/api/v1/feature-flags/${flag.id}`, developer)).json().description).toBe('Checkout for Canadian shoppers');

  await page.getByRole('button', { name: 'Create a key for this panel' }).click();
  await page.getByRole('button', { name: 'Create a key for this panel' }).waitFor({ state: 'detached' });
  await page.getByLabel('Context (JSON)').fill('{"country": "CA"}');
  await page.getByRole('button', { name: 'Evaluate' }).click();
  const result = page.locator('.evaluation-result');
  await result.locator('.badge', { hasText: 'enabled' }).waitFor();
  expect(await result.textContent()).toContain('in segment “Canadian shoppers”');
  expect(await result.textContent()).not.toContain(segment.id);

  // Another tab: the panel has its key already, and no second key is made.
  const tab = await context.newPage();
  await tab.goto(`${baseUrl}/flags/${flag.id}`);
  await tab.getByRole('button', { name: 'Evaluate' }).waitFor();
  expect(await tab.getByRole('button', { name: 'Create a key for this panel' }).count()).toBe(0);
  expect((await t.call('GET', '/api/v1/api-keys', developer)).json()).toHaveLength(1);
  await tab.close();

  // The flag's history, as field differences.
  await page.getByRole('link', { name: 'History' }).click();
  await page.getByRole('heading', { name: 'History of CA checkout' }).waitFor();
  const changed = page.locator('.history-entry').first().getByRole('row', { name: /Description/ });
  await changed.waitFor();
  expect(await changed.textContent()).toContain('First words');
  expect(await changed.textContent()).toContain('Checkout for Canadian shoppers');
  await screenshot(page, 'flag-history');

  // No SMTP on this server: the notifications page says so and email cannot be switched on.
  await page.getByRole('link', { name: 'Notifications' }).click();
  await page.getByText(/Email is not configured on this server/).waitFor();
  expect(await page.getByLabel('Send email').isDisabled()).toBe(true);
  await context.close();
}, 180_000);

// The results page says how old its numbers are and keeps up by itself while it is open: events tracked after it
// loaded show up without a reload and without the Refresh button.
it('shows "Updated N s ago" and the new conversions without a reload or Refresh', async () => {
  const { t, baseUrl, browser } = web;
  const developer = await t.user({ role: 'DEVELOPER' });
  const created = await t.call('POST', '/api/v1/experiments/', developer, abTest('Keeps up', 'keeps-up'));
  expect(created.statusCode).toBe(201);
  const experiment = created.json();
  expect((await t.call('POST', `/api/v1/experiments/${experiment.id}/start`, developer)).statusCode).toBe(200);
  const key = await t.apiKey(developer, ['sdk:ruleset']);
  const users = Array.from({ length: 40 }, (_, i) => ({ user_id: `u-${i}` }));
  const assigned = await t.inject({ method: 'POST', url: '/api/v1/tracking/assign/batch', headers: key.headers, payload: { experiment_key: 'keeps-up', users } });
  expect(assigned.statusCode).toBe(200);

  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await signIn(page, baseUrl, developer);
  await page.goto(`${baseUrl}/experiments/${experiment.id}`);
  const updated = page.locator('.updated-ago');
  await updated.getByText(/^Updated \d+ s ago$/).waitFor();
  const conversions = () => page.locator('.metric-result tbody tr td:nth-child(3)').allTextContents();
  expect(await conversions()).toEqual(['0', '0']);

  // Every user buys; the page was loaded before and nobody touches it.
  const events = users.map(({ user_id }) => ({ event_type: 'purchase', user_id, experiment_key: 'keeps-up', value: 1 }));
  const tracked = await t.inject({ method: 'POST', url: '/api/v1/tracking/batch', headers: key.headers, payload: { events } });
  expect(tracked.statusCode).toBe(200);
  expect(tracked.json().failed).toBe(0);
  const perVariant = (assigned.json().assignments as Array<{ variant_id: string }>).reduce<Record<string, number>>((n, a) => ({ ...n, [a.variant_id]: (n[a.variant_id] ?? 0) + 1 }), {});
  const wanted = experiment.variants.map((v: { id: string }) => String(perVariant[v.id] ?? 0)).sort();
  await page.waitForFunction(
    (expected) => {
      const cells = [...(globalThis as unknown as { document: { querySelectorAll(s: string): Iterable<{ textContent: string | null }> } }).document.querySelectorAll('.metric-result tbody tr td:nth-child(3)')];
      return JSON.stringify(cells.map((c) => c.textContent).sort()) === JSON.stringify(expected);
    },
    wanted,
    { timeout: 20_000 },
  );
  expect(await page.getByRole('button', { name: 'Refreshing…' }).count()).toBe(0);
  await updated.getByText(/^Updated \d+ s ago$/).waitFor();
  await page.close();
}, 120_000);
