import { afterAll, beforeAll, expect, it } from 'vitest';
import { pickSplit, splitBucket } from '../../src/targeting/variations.js';
import { screenshot, signIn, startWeb, type WebHarness } from './browser.js';

let web: WebHarness;
beforeAll(async () => {
  web = await startWeb();
}, 120_000);
afterAll(() => web?.close());

const SPLIT = [
  { variation: 'buy', weight: 30 },
  { variation: 'classic', weight: 70 },
];
/** The first shopper id the split (the reference in src/targeting) sends to `variation`. */
const shopperFor = (variation: string) => {
  for (let n = 0; ; n++) {
    const id = `shopper-${n}`;
    if (SPLIT[pickSplit(SPLIT, splitBucket('checkout-button', id))].variation === variation) return id;
  }
};

it('creates a JSON flag with variations, a variation rule and a split, and sees each user get the right value', async () => {
  const { t, baseUrl, browser } = web;
  const developer = await t.user({ role: 'DEVELOPER' });
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await signIn(page, baseUrl, developer);

  await page.getByRole('link', { name: 'Feature flags' }).click();
  await page.getByRole('link', { name: 'New flag' }).click();
  await page.getByLabel('Name', { exact: true }).fill('Checkout button');
  await page.getByLabel('Key', { exact: true }).fill('checkout-button');
  await page.getByLabel('Value type', { exact: true }).selectOption('json');

  // The JSON editor checks as it is typed.
  const first = page.getByLabel('Variation 1 value (JSON)', { exact: true });
  await first.fill('{"label": ');
  await page.getByText(/^This is not valid JSON: /).waitFor();
  await first.fill('"Buy now"');
  await page.getByText('A JSON value must be an object or an array', { exact: false }).waitFor();
  await first.fill('{"label": "Buy now"}');
  await page.getByLabel('Variation 1 key', { exact: true }).fill('buy');
  await page.getByLabel('Variation 2 key', { exact: true }).fill('order');
  await page.getByLabel('Variation 2 value (JSON)', { exact: true }).fill('{"label": "Place order", "primary": true}');
  await page.getByRole('button', { name: '+ Add variation', exact: true }).click();
  await page.getByLabel('Variation 3 key', { exact: true }).fill('classic');
  await page.getByLabel('Variation 3 value (JSON)', { exact: true }).fill('["Checkout"]');

  // Users for whom it is on: a 30/70 split of buy and classic; off: classic.
  await page.getByLabel('A split (sticky per user)').check();
  const split = page.getByRole('group', { name: 'Default split' });
  await split.getByLabel('Share 2 variation').selectOption({ label: 'classic' });
  await split.getByLabel('Share 1 weight %').fill('30');
  await split.getByText('Total: 80% (must be 100%)').waitFor();
  await split.getByLabel('Share 2 weight %').fill('70');
  await split.getByText('Total: 100% ✓').waitFor();
  await page.getByLabel('Off variation', { exact: true }).selectOption({ label: 'classic' });

  // Shoppers in Germany get "order".
  await page.getByRole('button', { name: '+ Add variation rule' }).click();
  const rule = page.getByRole('group', { name: 'Variation rule 1' });
  await rule.getByRole('button', { name: '+ Add rule group' }).click();
  await rule.getByPlaceholder('attribute, e.g. country').fill('country');
  await rule.getByPlaceholder('value').fill('DE');
  await rule.getByLabel('Rule 1 variation').selectOption({ label: 'order' });
  await screenshot(page, 'typed-flag-new');
  await page.getByRole('button', { name: 'Create flag' }).click();
  await page.getByRole('heading', { name: 'Checkout button' }).waitFor();
  await page.locator('.meta .badge', { hasText: 'json' }).waitFor();

  const stored = await t.inject({ method: 'GET', url: '/api/v1/feature-flags/?search=checkout-button', headers: developer.headers });
  expect(stored.json().items[0]).toMatchObject({
    value_type: 'json',
    variations: [
      { key: 'buy', value: { label: 'Buy now' } },
      { key: 'order', value: { label: 'Place order', primary: true } },
      { key: 'classic', value: ['Checkout'] },
    ],
    variation_split: SPLIT,
    off_variation: 'classic',
    variation_rules: [
      { targeting_rules: { logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'country', operator: 'equals', value: 'DE' }] }] }, variation: 'order' },
    ],
  });

  await page.getByRole('button', { name: 'Create a key for this panel' }).click();
  await page.getByRole('button', { name: 'Create a key for this panel' }).waitFor({ state: 'detached' });
  const result = page.locator('.evaluation');
  const evaluate = async (userId: string, country: string) => {
    await page.getByLabel('User ID').fill(userId);
    await page.getByLabel('Context (JSON)').fill(JSON.stringify({ country }));
    await page.getByRole('button', { name: 'Evaluate' }).click();
    await result.locator('.evaluation-result').waitFor();
    await result.getByText('Evaluating…').waitFor({ state: 'detached' });
  };
  const value = () => result.getByLabel('Value').textContent();

  // Off: the off variation.
  await evaluate('shopper-de', 'DE');
  await result.getByText('Variation classic · from the off variation').waitFor();
  expect(JSON.parse((await value()) ?? '')).toEqual(['Checkout']);

  await page.getByRole('switch', { name: 'Checkout button is off' }).click();
  await page.getByRole('switch', { name: 'Checkout button is on' }).waitFor();
  await result.getByText('Variation order · from a variation rule').waitFor();
  expect(JSON.parse((await value()) ?? '')).toEqual({ label: 'Place order', primary: true });
  expect(await result.getByLabel('Value').textContent()).toBe('{\n  "label": "Place order",\n  "primary": true\n}');
  await screenshot(page, 'typed-flag-evaluate');

  // Elsewhere the split decides, sticky per user, as the reference bucketing says.
  const buyer = shopperFor('buy');
  await evaluate(buyer, 'US');
  await result.getByText('Variation buy · from the split').waitFor();
  expect(JSON.parse((await value()) ?? '')).toEqual({ label: 'Buy now' });
  const classic = shopperFor('classic');
  await evaluate(classic, 'US');
  await result.getByText('Variation classic · from the split').waitFor();
  expect(JSON.parse((await value()) ?? '')).toEqual(['Checkout']);

  // The API agrees, with the key the panel made.
  // The panel keeps its key per signed-in account in local storage (web/src/features/feature-flags/evaluate-key.ts).
  const apiKey = await page.evaluate<string | null>(
    "Object.keys(window.localStorage).filter((k) => k.startsWith('uplift.evaluate-key.')).map((k) => window.localStorage.getItem(k))[0] ?? null",
  );
  const answer = await t.inject({
    method: 'POST',
    url: '/api/v1/feature-flags/evaluate/checkout-button',
    headers: { 'x-api-key': apiKey ?? '' },
    payload: { user_id: buyer, context: { country: 'US' } },
  });
  expect(answer.json()).toMatchObject({ enabled: true, variation: 'buy', value: { label: 'Buy now' }, variation_reason: 'split' });

  // On the flag page a variation still served cannot be removed; clearing the off variation saves.
  await page.getByRole('button', { name: 'Remove variation classic' }).click();
  await page.getByText('“classic” is still served by the default split and the off variation: serve another variation there before removing it.').waitFor();
  await page.getByLabel('Off variation', { exact: true }).selectOption({ label: "None (the caller's default)" });
  const saved = page.waitForResponse((r) => r.request().method() === 'PUT');
  await page.getByRole('button', { name: 'Save flag' }).click();
  expect((await saved).status()).toBe(200);
  const edited = await t.inject({ method: 'GET', url: `/api/v1/feature-flags/${stored.json().items[0].id}`, headers: developer.headers });
  expect(edited.json()).toMatchObject({ off_variation: null, variation_split: SPLIT, variations: [{ key: 'buy' }, { key: 'order' }, { key: 'classic' }] });

  // The list marks the flag's value type.
  await page.getByRole('link', { name: 'Feature flags' }).click();
  await page.getByRole('row', { name: /Checkout button/ }).locator('.badge', { hasText: 'json' }).waitFor();
  await page.close();
}, 120_000);
