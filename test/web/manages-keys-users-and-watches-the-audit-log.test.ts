import { afterAll, beforeAll, expect, it } from 'vitest';
import { screenshot, signIn, startWeb, type WebHarness } from './browser.js';

let web: WebHarness;
beforeAll(async () => {
  web = await startWeb();
}, 120_000);
afterAll(() => web?.close());

it('watches a flag change arrive in the live audit log, creates an API key shown once, and changes a role', async () => {
  const { t, baseUrl, browser } = web;
  const root = await t.user({ superuser: true });
  const colleague = await t.user({ role: 'ANALYST' });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseUrl });
  const page = await context.newPage();
  await signIn(page, baseUrl, root);

  await page.getByRole('link', { name: 'Audit log' }).click();
  await page.locator('.stream-status', { hasText: 'Live' }).waitFor();
  const flag = await t.inject({ method: 'POST', url: '/api/v1/feature-flags/', headers: root.headers, payload: { key: 'live-flag', name: 'Live flag' } });
  expect(flag.statusCode).toBe(201);
  const toggled = await t.inject({ method: 'POST', url: `/api/v1/feature-flags/${flag.json().id}/activate`, headers: root.headers });
  expect(toggled.statusCode).toBe(200);
  await page.getByRole('cell', { name: 'feature_flag_update' }).first().waitFor();
  await screenshot(page, 'audit-live');

  await page.getByRole('link', { name: 'API keys' }).click();
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.locator('.field-invalid').getByLabel('Key name').waitFor();
  await page.getByLabel('Key name').fill('Checkout service');
  await page.getByRole('button', { name: 'Create key' }).click();
  const shown = page.getByTestId('new-key');
  await shown.waitFor();
  const value = (await shown.textContent()) ?? '';
  await page.getByRole('button', { name: 'Copy' }).click();
  await page.getByRole('button', { name: 'Copied' }).waitFor();
  expect(await page.evaluate('navigator.clipboard.readText()')).toBe(value);
  const evaluate = await t.inject({ method: 'GET', url: '/api/v1/feature-flags/evaluate/live-flag?user_id=u1', headers: { 'x-api-key': value } });
  expect(evaluate.statusCode).toBe(200);
  await screenshot(page, 'api-key-created');
  await page.getByRole('button', { name: 'Done' }).click();
  expect(await page.getByTestId('new-key').count()).toBe(0);
  expect(await page.getByText(value).count()).toBe(0);

  await page.getByRole('link', { name: 'Users' }).click();
  await page.getByLabel(`Role of ${colleague.username}`).selectOption('DEVELOPER');
  await page.getByLabel(`Role of ${colleague.username}`).and(page.locator(':not([disabled])')).waitFor();
  const account = await t.inject({ method: 'GET', url: `/api/v1/users/${colleague.id}`, headers: root.headers });
  expect(account.json().role).toBe('DEVELOPER');
  await screenshot(page, 'users');

  await page.getByRole('link', { name: 'Notifications' }).click();
  await page.getByLabel('Webhook URL').fill('not a url');
  await page.getByLabel('Post to a chat webhook').check();
  await page.getByRole('button', { name: 'Save settings' }).click();
  await page.locator('.field-invalid').getByLabel('Webhook URL').waitFor();
  await screenshot(page, 'notifications-422');
  await context.close();
}, 120_000);
