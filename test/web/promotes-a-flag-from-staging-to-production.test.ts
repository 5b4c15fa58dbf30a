import { afterAll, beforeAll, expect, it } from 'vitest';
import { screenshot, signIn, startWeb, type WebHarness } from './browser.js';

let web: WebHarness;
beforeAll(async () => {
  web = await startWeb();
}, 120_000);
afterAll(() => web?.close());

it('creates a staging environment, turns a flag on in staging only from the list, and copies it to production from the flag page', async () => {
  const { t, baseUrl, browser } = web;
  const admin = await t.user({ role: 'ADMIN' });
  const created = await t.inject({
    method: 'POST',
    url: '/api/v1/feature-flags/',
    headers: admin.headers,
    payload: { key: 'beta-banner', name: 'Beta banner', rollout_percentage: 100 },
  });
  expect(created.statusCode).toBe(201);
  const flagId = created.json().id as string;
  const evaluate = async (key: string) => {
    const res = await t.inject({ method: 'GET', url: '/api/v1/feature-flags/evaluate/beta-banner?user_id=shopper-7', headers: { 'x-api-key': key } });
    expect(res.statusCode).toBe(200);
    return res.json().enabled as boolean;
  };

  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('dialog', (dialog) => void dialog.accept());
  await signIn(page, baseUrl, admin);

  // An admin creates "staging" on the Environments page, copying every flag's state from production (off, 100%).
  await page.getByRole('link', { name: 'Environments' }).click();
  const form = page.getByRole('form', { name: 'New environment' });
  await form.getByLabel('Name', { exact: true }).fill('Staging');
  await form.getByLabel('Key', { exact: true }).fill('staging');
  await form.getByLabel('Colour', { exact: true }).fill('#f59e0b');
  await form.getByLabel('Flag state', { exact: true }).selectOption('production');
  await form.getByRole('button', { name: 'Create environment' }).click();
  await page.getByRole('cell', { name: 'staging', exact: true }).waitFor();
  await screenshot(page, 'environments');

  // The flags list shows one switch per environment; the staging one turns the flag on in staging only.
  await page.getByRole('link', { name: 'Feature flags' }).click();
  await page.getByRole('switch', { name: 'Beta banner is off in Production' }).waitFor();
  await page.getByRole('switch', { name: 'Beta banner is off in Staging' }).click();
  await page.getByRole('switch', { name: 'Beta banner is on in Staging' }).waitFor();
  expect(await page.getByRole('switch', { name: 'Beta banner is off in Production' }).count()).toBe(1);
  await screenshot(page, 'flags-per-environment');

  // A key made on the API keys page names its environment; the list shows it.
  await page.getByRole('link', { name: 'API keys' }).click();
  await page.getByLabel('Key name').fill('Staging SDK');
  await page.getByLabel('Environment', { exact: true }).selectOption('staging');
  await page.getByRole('button', { name: 'Create key' }).click();
  const stagingKey = (await page.getByTestId('new-key').textContent()) ?? '';
  await page.getByRole('row', { name: /Staging SDK/ }).getByRole('cell', { name: 'Staging', exact: true }).waitFor();
  const listed = await t.inject({ method: 'GET', url: '/api/v1/api-keys', headers: admin.headers });
  expect(listed.json().find((k: { name: string }) => k.name === 'Staging SDK').environment).toBe('staging');
  const productionKey = await t.apiKey(admin);

  // Staging answers on, production off.
  expect(await evaluate(stagingKey)).toBe(true);
  expect(await evaluate(productionKey.key)).toBe(false);

  // On the flag page the switcher picks staging (remembered), the editor says so, and "Copy to environment"
  // promotes staging's state to production.
  await page.goto(`${baseUrl}/flags/${flagId}`);
  await page.getByLabel('Environment', { exact: true }).selectOption('staging');
  await page.getByTestId('editing-environment').filter({ hasText: 'Editing in Staging' }).waitFor();
  await page.getByRole('switch', { name: 'Beta banner is on in Staging' }).waitFor();
  // The evaluate panel answers in its key's environment and says which.
  await page.getByLabel('API key', { exact: true }).fill(stagingKey);
  await page.getByTestId('evaluate-environment').filter({ hasText: 'This key answers in Staging' }).waitFor();
  await page.getByRole('button', { name: 'Evaluate' }).click();
  await page.locator('.evaluation-result .badge', { hasText: 'enabled' }).waitFor();
  const copy = page.getByRole('region', { name: 'Copy to environment' });
  expect(await copy.getByLabel('From').inputValue()).toBe('staging');
  await copy.getByLabel('To').selectOption('production');
  await copy.getByRole('button', { name: 'Copy' }).click();
  await page.getByText('Copied “Beta banner” from Staging to Production.').waitFor();
  await screenshot(page, 'flag-copy-to-environment');

  // Both environments now agree, through each environment's key and in the flag view.
  expect(await evaluate(productionKey.key)).toBe(true);
  expect(await evaluate(stagingKey)).toBe(true);
  const view = await t.inject({ method: 'GET', url: `/api/v1/feature-flags/${flagId}`, headers: admin.headers });
  expect(view.json().environments.production.is_active).toBe(true);

  // The choice is remembered: back on the list, the Status column is staging's.
  await page.getByRole('link', { name: 'Feature flags' }).click();
  expect(await page.getByLabel('Environment', { exact: true }).inputValue()).toBe('staging');
  await page.getByRole('switch', { name: 'Beta banner is on in Production' }).waitFor();
  await page.close();
}, 120_000);
