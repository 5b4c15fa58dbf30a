import { afterAll, beforeAll, expect, it } from 'vitest';
import { signIn, startWeb, type WebHarness } from './browser.js';

/**
 * Issue 31: the results page says how old its numbers are and keeps up by itself while it is open. Events tracked
 * after the page loaded show up without a reload and without the Refresh button.
 */
let web: WebHarness;
beforeAll(async () => {
  web = await startWeb();
}, 120_000);
afterAll(() => web?.close());

it('shows "Updated N s ago" and the new conversions without a reload or Refresh', async () => {
  const { t, baseUrl, browser } = web;
  const developer = await t.user({ role: 'DEVELOPER' });
  const created = await t.call('POST', '/api/v1/experiments/', developer, {
    name: 'Keeps up',
    key: 'keeps-up',
    variants: [
      { name: 'control', is_control: true, traffic_allocation: 50 },
      { name: 'treatment', is_control: false, traffic_allocation: 50 },
    ],
    metrics: [{ name: 'Purchase', event_name: 'purchase', metric_type: 'conversion', is_primary: true }],
  });
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
