import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Driver, type Json, type TrackedEvent } from '../results/helpers.js';
import { screenshot, signIn, startWeb, type WebHarness } from './browser.js';

let web: WebHarness;
beforeAll(async () => {
  web = await startWeb();
}, 120_000);
afterAll(() => web?.close());

type Definition =
  | { name: string; kind: 'proportion'; event: string }
  | { name: string; kind: 'mean'; event: string; cap?: string }
  | { name: string; kind: 'quantile'; event: string; p: string; tags: string }
  | { name: string; kind: 'ratio'; numerator: string; denominator: string };

/** Fills the metric library's form for one definition (per-user values: the form's defaults, sum and count). */
async function define(page: Page, d: Definition): Promise<void> {
  await page.getByRole('link', { name: 'Metric library' }).click();
  await page.getByRole('link', { name: 'New metric' }).click();
  await page.getByLabel('Name', { exact: true }).fill(d.name);
  await page.getByLabel('Kind').selectOption(d.kind);
  if (d.kind === 'ratio') {
    await page.getByLabel('Numerator event').fill(d.numerator);
    await page.getByLabel('Denominator event').fill(d.denominator);
  } else {
    await page.getByLabel('Event name').fill(d.event);
  }
  if (d.kind === 'quantile') {
    await page.getByLabel('Quantile p').fill(d.p);
    await page.getByLabel('Tags').fill(d.tags);
    await page.getByLabel('Higher is better').uncheck();
  }
  if (d.kind === 'mean' && d.cap) {
    await page.getByLabel('Capping', { exact: true }).selectOption('absolute');
    await page.getByLabel('Cap per user').fill(d.cap);
  }
  if (d.kind === 'ratio') await screenshot(page, 'metric-form-ratio');
  await page.getByRole('button', { name: 'Create metric' }).click();
  await page.getByRole('heading', { name: d.name }).waitFor();
}

/** Creates and starts an experiment from the form: an inline primary conversion metric plus the library metrics named. */
async function createExperiment(page: Page, name: string, library: string[]): Promise<string> {
  await page.getByRole('link', { name: 'Experiments' }).click();
  await page.getByRole('link', { name: 'New experiment' }).click();
  await page.getByLabel('Name', { exact: true }).fill(name);
  for (const [i, option] of library.entries()) {
    await page.getByRole('button', { name: '+ Add metric' }).click();
    await page.getByLabel(`Metric ${i + 2} from the library`).selectOption({ label: option });
  }
  await page.getByRole('button', { name: 'Create experiment' }).click();
  await page.getByRole('heading', { name }).waitFor();
  await page.getByRole('button', { name: 'Start' }).click();
  await page.getByRole('button', { name: 'Pause' }).waitFor();
  return new URL(page.url()).pathname.split('/').pop()!;
}

/** Purchases with revenue (one large order in 20), and page load times: the treatment buys more and loads slower. */
function traffic(key: string, assigned: Map<string, string>, treatment: string): TrackedEvent[] {
  const events: TrackedEvent[] = [];
  for (const [i, [user, variant]] of [...assigned].entries()) {
    const lift = variant === treatment ? 1 : 0;
    if ((i * 13) % 10 < 3 + 2 * lift) {
      const orders = 1 + (i % 3);
      for (let k = 0; k < orders; k++) {
        events.push({ event_type: 'purchase', user_id: user, experiment_key: key });
        events.push({ event_type: 'revenue', user_id: user, experiment_key: key, value: (i % 20 === 0 ? 900 : 20 + ((i * 31 + k * 7) % 50)) + 10 * lift });
      }
    }
    if (i % 6 !== 5) events.push({ event_type: 'load_time', user_id: user, experiment_key: key, value: 200 + ((i * 37) % 500) + 120 * lift });
  }
  return events;
}

/** numpy's default (linear) quantile, written out here. */
function numpyQuantile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  const h = (s.length - 1) * p;
  const j = Math.floor(h);
  return j + 1 >= s.length ? s[s.length - 1] : s[j] + (h - j) * (s[j + 1] - s[j]);
}

/** Per variant, from the events sent: revenue per purchase (Σ revenue / Σ purchases) and the p90 of per-user load time. */
function expected(assigned: Map<string, string>, events: TrackedEvent[]): Map<string, { ratio: number; p90: number }> {
  const out = new Map<string, { ratio: number; p90: number }>();
  for (const variant of new Set(assigned.values())) {
    const mine = events.filter((e) => assigned.get(e.user_id) === variant);
    const revenue = mine.filter((e) => e.event_type === 'revenue').reduce((sum, e) => sum + (e.value ?? 0), 0);
    const purchases = mine.filter((e) => e.event_type === 'purchase').length;
    const load = new Map<string, number>();
    for (const e of mine) if (e.event_type === 'load_time') load.set(e.user_id, (load.get(e.user_id) ?? 0) + (e.value ?? 0));
    out.set(variant, { ratio: revenue / purchases, p90: numpyQuantile([...load.values()], 0.9) });
  }
  return out;
}

it('defines metrics once in the library, uses them in two experiments and reads ratio and p90 results with their intervals', async () => {
  const { t, baseUrl, browser } = web;
  const [analyst, developer] = await t.users('ANALYST', 'DEVELOPER');

  // An analyst defines the metrics: a proportion, a mean, a ratio, a capped mean and a p90.
  const library = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await signIn(library, baseUrl, analyst);
  const definitions: Definition[] = [
    { name: 'Purchased', kind: 'proportion', event: 'purchase' },
    { name: 'Revenue per user', kind: 'mean', event: 'revenue' },
    { name: 'Revenue per purchase', kind: 'ratio', numerator: 'revenue', denominator: 'purchase' },
    { name: 'Capped revenue', kind: 'mean', event: 'revenue', cap: '150' },
    { name: 'Load time p90', kind: 'quantile', event: 'load_time', p: '0.9', tags: 'speed, web' },
  ];
  for (const d of definitions) await define(library, d);
  await library.getByRole('link', { name: 'Metric library' }).click();
  for (const d of definitions) await library.getByRole('link', { name: d.name }).waitFor();
  const p90Row = library.getByRole('row', { name: /Load time p90/ });
  expect(await p90Row.locator('.badge', { hasText: 'quantile' }).count()).toBe(1);
  expect(await p90Row.textContent()).toContain('p90 of load_time');
  expect(await library.getByRole('row', { name: /Capped revenue/ }).textContent()).toContain('capped at 150 per user');
  await screenshot(library, 'metric-library');
  await library.getByPlaceholder('Search by name or tag').fill('speed');
  await library.getByRole('link', { name: 'Purchased' }).waitFor({ state: 'detached' });
  expect(await library.getByRole('row').count()).toBe(2);
  await library.getByPlaceholder('Search by name or tag').fill('');

  // A developer uses them from the experiment form, in two experiments.
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await signIn(page, baseUrl, developer);
  const first = await createExperiment(page, 'Checkout metrics', ['Purchased (proportion)', 'Revenue per user (mean)', 'Revenue per purchase (ratio)', 'Capped revenue (mean)', 'Load time p90 (quantile)']);
  const second = await createExperiment(page, 'Pricing metrics', ['Revenue per purchase (ratio)', 'Load time p90 (quantile)']);
  await page.getByRole('link', { name: 'metric library' }).first().waitFor();
  const experiments: Json[] = await Promise.all([first, second].map(async (id) => (await t.call('GET', `/api/v1/experiments/${id}`, developer)).json()));
  for (const e of experiments) expect(e.metrics.filter((m: Json) => m.metric_definition_id).length).toBe(e.key === 'checkout-metrics' ? 5 : 2);

  // Traffic through the tracking API.
  const d = new Driver(t, developer, (await t.apiKey(developer, ['sdk:ruleset'])).headers);
  const users = Array.from({ length: 400 }, (_, i) => `shopper-${i}`);
  const reference = new Map<string, Map<string, { ratio: number; p90: number }>>();
  for (const e of experiments) {
    const assigned = await d.assign(e.key, users);
    const events = traffic(e.key, assigned, e.variants.find((v: Json) => !v.is_control).id);
    await d.track(events);
    reference.set(e.id, expected(assigned, events));
  }

  for (const e of experiments) {
    await page.goto(`${baseUrl}/experiments/${e.id}`);
    await page.getByRole('button', { name: 'Refresh' }).click();
    const ratio = page.getByRole('region', { name: /Revenue per purchase/ });
    await ratio.getByRole('columnheader', { name: 'revenue per purchase' }).waitFor();
    await ratio.getByRole('figure', { name: /: difference against control/ }).locator('.interval').first().waitFor();
    await ratio.getByRole('figure', { name: /relative difference against control/ }).locator('.interval').first().waitFor();
    const p90 = page.getByRole('region', { name: /Load time p90/ });
    await p90.getByRole('columnheader', { name: 'p90 of load_time' }).waitFor();
    await p90.getByText(/lower is better/).waitFor();
    await p90.getByRole('figure', { name: /: difference against control/ }).locator('.interval').first().waitFor();
    await p90.getByRole('figure', { name: /relative difference against control/ }).locator('.interval').first().waitFor();

    // Each arm's ratio and p90 on the page are those computed here from the events sent.
    for (const v of e.variants as Json[]) {
      const want = reference.get(e.id)!.get(v.id)!;
      const value = async (region: typeof ratio) => (await region.getByRole('row', { name: new RegExp(`^${v.name}`) }).getByRole('cell').allTextContents())[2];
      expect(await value(ratio)).toBe(want.ratio.toFixed(3));
      expect(await value(p90)).toBe(want.p90.toFixed(3));
    }
    // The page shows the API's numbers: the differences and their intervals.
    const payload: Json = (await t.call('GET', `/api/v1/results/${e.id}?use_cache=true`, developer)).json();
    for (const [region, name] of [[ratio, 'Revenue per purchase'], [p90, 'Load time p90']] as const) {
      const metric = payload.metrics.find((m: Json) => m.metric_name === name);
      expect(metric.definition.version).toBe(1);
      expect(await region.textContent()).toContain('definition version 1');
      const treatment = metric.definition.variants.find((v: Json) => v.difference !== null);
      const arm = metric.variants.find((v: Json) => v.variant_id === treatment.variant_id);
      const cells = await region.getByRole('row', { name: new RegExp(`^${arm.variant_name}`) }).getByRole('cell').allTextContents();
      expect(cells.slice(2, 7)).toEqual([
        treatment.value.toFixed(3),
        treatment.difference.toFixed(3),
        `${treatment.difference_ci.lower.toFixed(3)} to ${treatment.difference_ci.upper.toFixed(3)}`,
        `${(treatment.relative_difference * 100).toFixed(1)}%`,
        `${(treatment.relative_ci.lower * 100).toFixed(1)}% to ${(treatment.relative_ci.upper * 100).toFixed(1)}%`,
      ]);
    }
    if (e.key === 'checkout-metrics') {
      const capped = payload.metrics.find((m: Json) => m.metric_name === 'Capped revenue').definition.capping;
      expect(capped.users_capped).toBeGreaterThan(0);
      expect(await page.getByRole('region', { name: /Capped revenue/ }).textContent()).toContain(`Capped at 150.00 per user: ${capped.users_capped} users capped`);
      await screenshot(page, 'metric-definition-results');
    }
  }

  // Both experiments run, so the ratio cannot be deleted: the analyst is told which experiments use it.
  await library.getByRole('link', { name: 'Revenue per purchase' }).click();
  library.once('dialog', (dialog) => void dialog.accept());
  await library.getByRole('button', { name: 'Delete' }).click();
  const refusal = library.getByRole('alert').filter({ hasText: 'cannot be deleted' });
  await refusal.waitFor();
  expect(await refusal.textContent()).toContain('these running experiments use it');
  for (const name of ['Checkout metrics', 'Pricing metrics']) await refusal.getByRole('link', { name }).waitFor();
  await library.close();
  await page.close();
}, 180_000);
