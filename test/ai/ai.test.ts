import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UpliftApp } from '../../src/app.js';
import { TEMPLATE_NOT_FOUND } from '../../src/modules/ai/service.js';
import { interpretFromTemplate } from '../../src/modules/ai/interpretation.js';
import { EFFECT_TOO_SMALL, RATE_REACHES_ONE } from '../../src/modules/ai/planning.js';
import { sampleSizeForEffect } from '../../src/stats/index.js';
import { experiment } from '../helpers/fixtures.js';
import { llmApp, reply, type FakeLlm, type LlmApp, type ReceivedRequest } from '../helpers/llm.js';
import type { TestApp, TestUser } from '../helpers/test-app.js';

type Mode = 'design' | 'interpret' | 'garbage' | 'error' | 'hang';
let mode: Mode = 'design';
let llm: FakeLlm;
let t: TestApp;
/** The same database without a language model configured. */
let plain: UpliftApp;
let developer: TestUser;
let viewer: TestUser;

function respond(request: ReceivedRequest) {
  if (mode === 'error') return { status: 500, body: { error: 'down' } };
  if (mode === 'hang') return 'hang' as const;
  if (mode === 'garbage') return reply('{"name": 42}');
  if (mode === 'interpret') return reply('{"summary": "Too early to call.", "key_findings": ["No users yet."], "next_steps": ["Wait."]}');
  return reply(
    JSON.stringify({
      name: 'One-page checkout',
      hypothesis: 'If checkout fits on one page, more buyers finish, because nothing hides the next step.',
      description: 'Collapse checkout into a single page.',
      variants: [
        { name: 'current_checkout', description: 'Today' },
        { name: 'one_page', description: 'Single page' },
      ],
      rationale: ['Checkout drop-off is the largest leak.'],
    }),
  );
}

let app: LlmApp;
beforeAll(async () => {
  app = await llmApp(respond);
  ({ llm, t, plain, developer, viewer } = app);
});
afterAll(() => app.close());
const get: LlmApp['get'] = (...args) => app.get(...args);
const post: LlmApp['post'] = (...args) => app.post(...args);
const callsDuring: LlmApp['callsDuring'] = (fn) => app.callsDuring(fn);

describe('AI templates and sample size', () => {
  it('lists templates and gets one by id', async () => {
    const list = await get('/api/v1/ai/templates', viewer);
    expect(list.statusCode).toBe(200);
    expect(list.json().map((x: { id: string }) => x.id)).toContain('checkout-conversion');
    const one = await get('/api/v1/ai/templates/checkout-conversion', viewer);
    expect(one.json()).toMatchObject({ id: 'checkout-conversion', experiment_type: 'a_b', default_baseline_conversion_rate: 0.03 });
    const missing = await get('/api/v1/ai/templates/nothing-like-it', viewer);
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ detail: TEMPLATE_NOT_FOUND });
    const bad = await get('/api/v1/ai/templates/Not_An_Id', viewer);
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail[0]).toMatchObject({ loc: ['path', 'template_id'], type: 'string_pattern_mismatch' });
    expect((await get('/api/v1/ai/templates')).statusCode).toBe(401);
  });

  it('plans the sample size with the statistics engine', async () => {
    const res = await get('/api/v1/ai/sample-size?baseline_conversion_rate=0.05&mde=0.1&daily_traffic=1000', viewer);
    expect(res.statusCode).toBe(200);
    const expected = sampleSizeForEffect(0.05, 0.1, 'relative', 0.05, 0.8).value!.n_per_variant;
    expect(res.json()).toMatchObject({
      required_sample_size_per_variant: expected,
      total_sample_size: 2 * expected,
      comparisons: 1,
      alpha_per_comparison: 0.05,
      estimated_days: Math.ceil(expected / 500),
      generated_by: 'template',
    });
    expect(res.json().target_conversion_rate).toBeCloseTo(0.055, 12);
    const corrected = await get('/api/v1/ai/sample-size?baseline_conversion_rate=0.05&mde=0.1&n_variants=3&correction_method=bonferroni', viewer);
    expect(corrected.json()).toMatchObject({ comparisons: 2, alpha_per_comparison: 0.025, estimated_days: null });
    expect(corrected.json().required_sample_size_per_variant).toBe(sampleSizeForEffect(0.05, 0.1, 'relative', 0.025, 0.8).value!.n_per_variant);
  });

  it('refuses impossible plans and bad parameters with 422', async () => {
    const toOne = await get('/api/v1/ai/sample-size?baseline_conversion_rate=0.6&mde=0.9', viewer);
    expect(toOne.statusCode).toBe(422);
    expect(toOne.json().detail).toEqual([{ type: 'value_error', loc: ['query', 'mde'], msg: RATE_REACHES_ONE }]);
    const tiny = await get('/api/v1/ai/sample-size?baseline_conversion_rate=0.5&mde=1e-12', viewer);
    expect(tiny.json().detail).toEqual([{ type: 'value_error', loc: ['query', 'mde'], msg: EFFECT_TOO_SMALL }]);
    const bad = await get('/api/v1/ai/sample-size?mde=1', viewer);
    expect(bad.json().detail.map((d: { loc: unknown[]; type: string }) => [d.loc, d.type])).toEqual(
      expect.arrayContaining([
        [['query', 'baseline_conversion_rate'], 'missing'],
        [['query', 'mde'], 'less_than'],
      ]),
    );
    expect((await get('/api/v1/ai/sample-size?baseline_conversion_rate=0.1')).statusCode).toBe(401);
  });
});

describe('AI design', () => {
  const goal = 'Increase checkout purchases on mobile';

  it('answers from the matching template without a language model', async () => {
    const res = await post('/api/v1/ai/design', viewer, { goal, daily_traffic: 2000 }, plain.app);
    expect(res.statusCode).toBe(200);
    const design = res.json();
    expect(design).toMatchObject({ generated_by: 'template', template_id: 'checkout-conversion' });
    expect(design.experiment).toMatchObject({ key: 'increase_checkout_purchases_on_mobile', experiment_type: 'a_b' });
    expect(design.experiment.variants.map((v: { traffic_allocation: number }) => v.traffic_allocation)).toEqual([50, 50]);
    expect(design.experiment.metrics.find((m: { is_primary: boolean }) => m.is_primary)).toMatchObject({ event_name: 'purchase', expected_effect: 0.1 });
    expect(design.sample_size.required_sample_size_per_variant).toBe(sampleSizeForEffect(0.03, 0.1, 'relative', 0.05, 0.8).value!.n_per_variant);
    const three = await post('/api/v1/ai/design', viewer, { goal: 'anything', template_id: 'generic-ab', n_variants: 3 }, plain.app);
    const allocations = three.json().experiment.variants.map((v: { traffic_allocation: number }) => v.traffic_allocation);
    expect(allocations).toEqual([33.34, 33.33, 33.33]);
    expect(three.json().sample_size.alpha_per_comparison).toBeCloseTo(0.025, 12);
  });

  it('lets the language model word the design, keeping the numbers', async () => {
    mode = 'design';
    const { result, calls } = await callsDuring(() => post('/api/v1/ai/design', viewer, { goal }));
    expect(calls).toBe(1);
    const request = JSON.parse(llm.requests.at(-1)!.body);
    expect(llm.requests.at(-1)!.url).toBe('/v1/chat/completions');
    expect(llm.requests.at(-1)!.headers.authorization).toBe('Bearer sk-test');
    expect(request.model).toBe('judge-model');
    const design = result.json();
    expect(design.generated_by).toBe('llm');
    expect(design.experiment.name).toBe('One-page checkout');
    expect(design.experiment.variants).toMatchObject([
      { name: 'current_checkout', is_control: true, traffic_allocation: 50 },
      { name: 'one_page', is_control: false, traffic_allocation: 50 },
    ]);
    expect(design.sample_size.required_sample_size_per_variant).toBe(sampleSizeForEffect(0.03, 0.1, 'relative', 0.05, 0.8).value!.n_per_variant);
  });

  it('falls back to the template on an unusable reply, a failing model (two tries) and a timeout', async () => {
    for (const [failure, tries] of [['garbage', 1], ['error', 2], ['hang', 2]] as const) {
      mode = failure;
      const { result, calls } = await callsDuring(() => post('/api/v1/ai/design', viewer, { goal }));
      expect(result.statusCode).toBe(200);
      expect(result.json()).toMatchObject({ generated_by: 'template', template_id: 'checkout-conversion' });
      expect(calls).toBe(tries);
    }
  });

  it('refuses unknown templates, bad bodies and callers without a token', async () => {
    const missing = await post('/api/v1/ai/design', viewer, { goal, template_id: 'nope' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ detail: TEMPLATE_NOT_FOUND });
    const bad = await post('/api/v1/ai/design', viewer, { goal: 'x', extra: 1 });
    expect(bad.json().detail.map((d: { loc: unknown[] }) => d.loc)).toEqual(expect.arrayContaining([['body', 'goal'], ['body', 'extra']]));
    expect((await post('/api/v1/ai/design', undefined, { goal })).statusCode).toBe(401);
  });
});

describe('AI interpret', () => {
  it('reads a draft as having no results, without asking the model', async () => {
    const draft = await experiment(t, developer, { start: false });
    const { result, calls } = await callsDuring(() => post(`/api/v1/ai/interpret/${draft.id}`, viewer));
    expect(result.statusCode).toBe(200);
    expect(result.json()).toMatchObject({ experiment_id: draft.id, status: 'draft', generated_by: 'template', recommendation: null });
    expect(result.json().summary).toContain('has not started');
    expect(calls).toBe(0);
  });

  it("explains a running experiment's results, worded by the model when its reply is usable", async () => {
    const running = await experiment(t, developer);
    const results = (await get(`/api/v1/results/${running.id}`, viewer)).json();
    const plainAnswer = await post(`/api/v1/ai/interpret/${running.id}`, viewer, undefined, plain.app);
    expect(plainAnswer.statusCode).toBe(200);
    expect(plainAnswer.json()).toMatchObject({ status: 'active', generated_by: 'template', recommendation: results.summary.recommendation });
    expect(plainAnswer.json().key_findings).toEqual([expect.stringContaining('treatment over 0 users')]);
    mode = 'interpret';
    const worded = await post(`/api/v1/ai/interpret/${running.id}`, viewer);
    expect(worded.json()).toMatchObject({
      generated_by: 'llm',
      recommendation: results.summary.recommendation,
      summary: 'Too early to call.',
      key_findings: ['No users yet.'],
      next_steps: ['Wait.'],
    });
    mode = 'garbage';
    expect((await post(`/api/v1/ai/interpret/${running.id}`, viewer)).json()).toEqual(plainAnswer.json());
  });

  it('refuses unknown experiments, malformed ids and callers without a token', async () => {
    const missing = await post(`/api/v1/ai/interpret/${crypto.randomUUID()}`, viewer);
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ detail: 'Experiment not found' });
    expect((await post('/api/v1/ai/interpret/not-a-uuid', viewer)).statusCode).toBe(422);
    expect((await post(`/api/v1/ai/interpret/${crypto.randomUUID()}`, undefined)).statusCode).toBe(401);
  });

  it('states the facts of the results: winner, lifts, significance and a sample ratio mismatch', () => {
    const facts = interpretFromTemplate(
      {
        id: 'e', name: 'Checkout', status: 'active', hypothesis: null,
        variants: [{ id: 'c', name: 'control', is_control: true }, { id: 'b', name: 'one_page', is_control: false }],
      },
      {
        summary: { recommendation: 'INCONCLUSIVE', recommendation_reason: 'Sample ratio mismatch (p < 0.001).', has_winner: true, winning_variant_id: 'b' },
        srm: { warning: true, p_value: 0.0001 },
        sample_size_adequate: false,
        metrics: [{
          metric_name: 'Purchase', is_primary: true,
          variants: [
            { variant_name: 'control', sample_size: 1000, mean: 0.1, p_value: null, is_significant: false },
            { variant_name: 'one_page', sample_size: 1000, mean: 0.12, p_value: 0.02, adjusted_p_value: 0.02, is_significant: true },
          ],
        }],
      },
    );
    expect(facts.recommendation).toBe('INCONCLUSIVE');
    expect(facts.key_findings).toEqual(['Purchase (primary): one_page converts at 12% against 10% for control (+20% relative) over 1000 users, p = 0.020, significant.']);
    expect(facts.caveats).toEqual([
      'Sample ratio mismatch (p < 0.001): users were not split as configured, so the results cannot be trusted yet.',
      'The sample is still smaller than the planned sample size.',
    ]);
  });
});

describe('AI rate limits', () => {
  it('allows 10 designs and 10 interpretations (all experiments together) a minute per address', async () => {
    const limited = await t.spawn({ RATE_LIMIT_ENABLED: 'true' });
    const [a, b] = await Promise.all([experiment(t, developer, { start: false }), experiment(t, developer, { start: false })]);
    for (let i = 0; i < 10; i++) {
      expect((await post(`/api/v1/ai/interpret/${i % 2 ? a.id : b.id}`, viewer, undefined, limited.app)).statusCode).toBe(200);
      expect((await post('/api/v1/ai/design', viewer, { goal: 'More sign-ups' }, limited.app)).statusCode).toBe(200);
    }
    const interpret = await post(`/api/v1/ai/interpret/${a.id}`, viewer, undefined, limited.app);
    expect(interpret.statusCode).toBe(429);
    expect(Number(interpret.headers['retry-after'])).toBeGreaterThan(0);
    expect((await post('/api/v1/ai/design', viewer, { goal: 'More sign-ups' }, limited.app)).statusCode).toBe(429);
    const templates = await limited.app.inject({ method: 'GET', url: '/api/v1/ai/templates', headers: viewer.headers });
    expect(templates.statusCode).toBe(200);
  });
});

