import { afterAll, beforeAll, expect, it } from 'vitest';
import { screenshot, signIn, startWeb, type WebHarness } from './browser.js';

let web: WebHarness;
beforeAll(async () => {
  web = await startWeb();
}, 120_000);
afterAll(() => web?.close());

it('creates an id-list segment and uploads a CSV of user IDs in several requests, with progress', async () => {
  const { t, baseUrl, browser } = web;
  const developer = await t.user({ role: 'DEVELOPER' });
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await signIn(page, baseUrl, developer);

  await page.getByRole('link', { name: 'Segments' }).click();
  await page.getByRole('link', { name: 'New segment' }).click();
  await page.getByRole('button', { name: 'Create segment' }).click();
  // The API's 422 lands next to the field its `loc` names.
  await page.locator('.field-invalid').getByLabel('Name').waitFor();
  await page.getByLabel('Name').fill('Beta testers');
  await page.getByLabel('Kind').selectOption('id_list');
  await page.getByRole('button', { name: 'Create segment' }).click();
  await page.getByRole('heading', { name: 'Beta testers' }).waitFor();

  // 25,000 distinct IDs (3 requests of at most 10,000), a header row and a repeat that counts once.
  const ids = Array.from({ length: 25_000 }, (_, i) => `user-${i}`);
  const csv = ['user_id,plan', ...ids.map((id) => `${id},pro`), 'user-7,pro'].join('\n');
  await page.getByLabel('CSV file').setInputFiles({ name: 'beta.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
  await page.getByText('25,000 distinct IDs in beta.csv').waitFor();
  await page.getByRole('button', { name: 'Add to segment' }).click();
  await page.getByText('Done: 25,000 added, 0 already members; the segment now has 25,000 members.').waitFor();
  expect(await page.getByText('25,000 of 25,000 IDs sent').isVisible()).toBe(true);
  await page.locator('.member-count', { hasText: '25,000' }).waitFor();
  await screenshot(page, 'segment-upload');

  const segments = await t.inject({ method: 'GET', url: '/api/v1/segments', headers: developer.headers });
  const segment = segments.json().find((s: { name: string }) => s.name === 'Beta testers');
  const detail = await t.inject({ method: 'GET', url: `/api/v1/segments/${segment.id}`, headers: developer.headers });
  expect(detail.json()).toMatchObject({ kind: 'id_list', member_count: 25_000 });
  await page.close();
}, 120_000);
