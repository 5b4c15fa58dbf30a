import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWeb, type WebHarness } from './browser.js';

/**
 * Issue 31: the API docs pages (Swagger UI at /api/v1/docs, ReDoc at /api/v1/redoc) load in Chromium with no request
 * to another host and no console error (Swagger UI logged a Content-Security-Policy error; ReDoc fetched a logo).
 */
let web: WebHarness;
beforeAll(async () => {
  web = await startWeb();
}, 120_000);
afterAll(() => web?.close());

async function visit(path: string, ready: string) {
  const context = await web.browser.newContext();
  const page = await context.newPage();
  const outside: string[] = [];
  const errors: string[] = [];
  const origin = new URL(web.baseUrl).origin;
  // Every request leaving this server is recorded and refused.
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith('data:') || url.startsWith('blob:') || new URL(url).origin === origin) return route.continue();
    outside.push(url);
    return route.abort();
  });
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${web.baseUrl}${path}`, { waitUntil: 'networkidle' });
  await page.locator(ready).first().waitFor();
  await page.waitForLoadState('networkidle');
  await context.close();
  return { outside, errors };
}

describe('API docs pages', () => {
  it('Swagger UI: no outside request, no console error', async () => {
    const { outside, errors } = await visit('/api/v1/docs', '.opblock');
    expect(outside).toEqual([]);
    expect(errors).toEqual([]);
  }, 120_000);

  it('ReDoc: no outside request, no console error', async () => {
    const { outside, errors } = await visit('/api/v1/redoc', '.menu-content');
    expect(outside).toEqual([]);
    expect(errors).toEqual([]);
  }, 120_000);
});
