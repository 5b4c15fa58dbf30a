import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { TEST_PASSWORD, testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

/**
 * End-to-end harness: the real app (with the dashboard built by `npm install`) listening on port 0, and Debian's
 * Chromium driven by playwright-core. Screenshots land in test-results/web/ as artifacts.
 */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = join(process.cwd(), 'test-results', 'web');

export interface WebHarness {
  t: TestApp;
  baseUrl: string;
  browser: Browser;
  close(): Promise<void>;
}

export async function startWeb(): Promise<WebHarness> {
  const t = await testApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = t.app.server.address() as AddressInfo;
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  mkdirSync(ARTIFACTS, { recursive: true });
  return {
    t,
    baseUrl: `http://127.0.0.1:${port}`,
    browser,
    close: async () => {
      await browser.close();
      await t.close();
    },
  };
}

export async function signIn(page: Page, baseUrl: string, user: TestUser): Promise<void> {
  await page.goto(`${baseUrl}/`);
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(TEST_PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Main' }).waitFor();
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}
