import { afterAll, beforeAll, expect, it } from 'vitest';
import { screenshot, signIn, startWeb, type WebHarness } from './browser.js';

let web: WebHarness;
beforeAll(async () => {
  web = await startWeb();
}, 120_000);
afterAll(() => web?.close());

it('signs in, creates and starts an experiment, and reads a significant result with its chart', async () => {
  const { t, baseUrl, browser } = web;
  const admin = await t.user({ role: 'ADMIN' });
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await signIn(page, baseUrl, admin);

  await page.getByRole('link', { name: 'New experiment' }).click();
  await page.getByLabel('Name', { exact: true }).fill('Checkout button colour');
  await expect(page.getByLabel('Key', { exact: true }).inputValue()).resolves.toBe('checkout-button-colour');
  await page.getByLabel('Allocation %').first().fill('60');
  await expect(page.getByText('Total allocation: 110%').isVisible()).resolves.toBe(true);
  await page.getByRole('button', { name: 'Create experiment' }).click();
  await expect(page.getByText('Allocations add up to 110%; they must add up to 100%.').isVisible()).resolves.toBe(true);
  await page.getByRole('button', { name: 'Split evenly' }).click();
  await screenshot(page, 'experiment-form');
  await page.getByRole('button', { name: 'Create experiment' }).click();

  await page.getByRole('heading', { name: 'Checkout button colour' }).waitFor();
  expect(await page.getByRole('button', { name: 'Pause' }).count()).toBe(0);
  await page.getByRole('button', { name: 'Start' }).click();
  await page.getByRole('button', { name: 'Pause' }).waitFor();
  expect(await page.getByRole('button', { name: 'Start' }).count()).toBe(0);

  // Traffic through the tracking API: treatment converts at 40%, control at 10%.
  const key = await t.apiKey(admin);
  for (let i = 0; i < 300; i += 1) {
    const user_id = `visitor-${i}`;
    const assigned = await t.inject({ method: 'POST', url: '/api/v1/tracking/assign', headers: key.headers, payload: { experiment_key: 'checkout-button-colour', user_id } });
    expect(assigned.statusCode).toBe(200);
    const rate = assigned.json().is_control ? 0.1 : 0.4;
    if ((i * 7919) % 100 < rate * 100) {
      const tracked = await t.inject({
        method: 'POST',
        url: '/api/v1/tracking/track',
        headers: key.headers,
        payload: { event_type: 'purchase', user_id, experiment_key: 'checkout-button-colour', value: 1 },
      });
      expect(tracked.statusCode).toBe(200);
    }
  }

  await page.getByRole('button', { name: 'Refresh' }).click();
  await page.getByText('SHIP VARIANT').waitFor();
  expect(await page.getByText('significant', { exact: true }).count()).toBeGreaterThan(0);
  const lift = page.getByRole('figure', { name: /lift against control/ });
  await lift.locator('.interval').first().waitFor();
  await screenshot(page, 'experiment-result');
  await page.getByRole('figure', { name: /daily cumulative/ }).locator('.recharts-line-dot').first().waitFor();

  // The list shows it with its status badge, and the status filter finds it.
  await page.getByRole('link', { name: 'Experiments' }).click();
  await page.getByLabel('Filter by status').selectOption('active');
  const row = page.getByRole('row', { name: /Checkout button colour/ });
  await row.locator('.badge', { hasText: 'active' }).waitFor();
  await page.getByLabel('Filter by status').selectOption('draft');
  await page.getByText('No experiment matches these filters.').waitFor();
  await page.getByLabel('Filter by status').selectOption('');
  await screenshot(page, 'experiments-list');
  await row.getByRole('link', { name: 'Checkout button colour' }).click();

  // At a phone's width the page reflows instead of scrolling sideways (wide tables scroll inside their own box).
  await page.setViewportSize({ width: 390, height: 844 });
  // Charts resize on their ResizeObserver callback, so wait for the reflow rather than reading the width at once.
  // A function, not a string: the dashboard's content security policy forbids evaluating strings.
  await page.waitForFunction(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth <= 390);
  await page.getByRole('figure', { name: /lift against control/ }).locator('.interval').first().waitFor();
  await screenshot(page, 'experiment-result-phone');
  await page.close();
}, 120_000);
