import { afterAll, beforeAll, expect, it } from 'vitest';
import { screenshot, signIn, startWeb, type WebHarness } from './browser.js';

let web: WebHarness;
beforeAll(async () => {
  web = await startWeb();
}, 120_000);
afterAll(() => web?.close());

it('creates a flag, evaluates it for a user, toggles it on and sees the evaluation change', async () => {
  const { t, baseUrl, browser } = web;
  const developer = await t.user({ role: 'DEVELOPER' });
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await signIn(page, baseUrl, developer);

  await page.getByRole('link', { name: 'Feature flags' }).click();
  await page.getByText('No feature flags yet.').waitFor();
  await page.getByRole('link', { name: 'New flag' }).click();
  await page.getByLabel('Name', { exact: true }).fill('New checkout');
  await page.getByLabel('Key', { exact: true }).fill('new-checkout');
  await page.getByRole('button', { name: 'Create flag' }).click();
  await page.getByRole('heading', { name: 'New checkout' }).waitFor();

  await page.getByRole('button', { name: 'Create a key for this panel' }).click();
  await page.getByRole('button', { name: 'Create a key for this panel' }).waitFor({ state: 'detached' });
  await page.getByLabel('User ID').fill('shopper-42');
  await page.getByRole('button', { name: 'Evaluate' }).click();
  const result = page.locator('.evaluation-result');
  await result.locator('.badge', { hasText: 'disabled' }).waitFor();
  expect(await result.textContent()).toContain('reason disabled');

  await page.getByRole('switch', { name: 'New checkout is off' }).click();
  await page.getByRole('switch', { name: 'New checkout is on' }).waitFor();
  await result.locator('.badge', { hasText: 'enabled' }).waitFor();
  expect(await result.textContent()).toContain('shopper-42');
  await screenshot(page, 'flag-evaluate');

  // The API agrees: the flag is on.
  const flags = await t.inject({ method: 'GET', url: '/api/v1/feature-flags/?search=new-checkout', headers: developer.headers });
  expect(flags.json().items[0].is_active).toBe(true);

  // Back on the list, the switch shows it on and a VIEWER gets no switch to flip.
  await page.getByRole('link', { name: 'Feature flags' }).click();
  await page.getByRole('switch', { name: 'New checkout is on' }).waitFor();
  await page.close();

  const viewer = await t.user();
  const viewerPage = await browser.newPage({ viewport: { width: 390, height: 844 } });
  await signIn(viewerPage, baseUrl, viewer);
  await viewerPage.goto(`${baseUrl}/flags`);
  const viewerSwitch = viewerPage.getByRole('switch', { name: 'New checkout is on' });
  await viewerSwitch.waitFor();
  expect(await viewerSwitch.isDisabled()).toBe(true);
  expect(await viewerPage.getByRole('link', { name: 'New flag' }).count()).toBe(0);
  await screenshot(viewerPage, 'flags-phone-viewer');
  await viewerPage.close();
}, 120_000);
