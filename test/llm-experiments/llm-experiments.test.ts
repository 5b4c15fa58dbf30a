import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UpliftApp } from '../../src/app.js';
import { NO_LLM_CONFIGURED, UNKNOWN_VARIANT } from '../../src/modules/llm-experiments/service.js';
import { experiment } from '../helpers/fixtures.js';
import { llmApp, reply, type LlmApp, type ReceivedRequest } from '../helpers/llm.js';
import type { TestApp, TestUser } from '../helpers/test-app.js';

let t: TestApp;
/** The same database without a language model configured. */
let plain: UpliftApp;
let developer: TestUser;
let viewer: TestUser;

/** A judge that scores by the answer: good 0.9, bad 0.2, vary-N N/10, `noscore` no JSON score, `fail` a 500. */
function judge(request: ReceivedRequest) {
  const { answer } = JSON.parse(JSON.parse(request.body).messages[1].content) as { answer: string };
  if (answer.startsWith('fail')) return { status: 500, body: { error: 'overloaded' } };
  if (answer.startsWith('noscore')) return reply('I would rather not give a number.');
  if (answer.startsWith('vary-')) return reply(`{"score": ${Number(answer.slice(5)) / 10}, "reasoning": "ok"}`);
  if (answer.startsWith('outofrange')) return reply('{"score": 7}');
  return reply(`Here you go: \`\`\`json\n{"score": ${answer.startsWith('good') ? 0.9 : 0.2}, "reasoning": "fine"}\n\`\`\``);
}

// This file's language model only judges.
let app: LlmApp;
beforeAll(async () => {
  app = await llmApp(judge);
  ({ t, plain, developer, viewer } = app);
});
afterAll(() => app.close());
const get: LlmApp['get'] = (...args) => app.get(...args);
const post: LlmApp['post'] = (...args) => app.post(...args);
const callsDuring: LlmApp['callsDuring'] = (fn) => app.callsDuring(fn);

describe('LLM experiments', () => {
  const outputs = (id: string, user: TestUser, items: Array<[string, string]>) =>
    post(`/api/v1/llm-experiments/${id}/outputs`, user, { outputs: items.map(([variant_name, output]) => ({ variant_name, prompt: 'Q?', output })) });
  const results = async (id: string) => {
    const res = await get(`/api/v1/llm-experiments/${id}/results`, viewer);
    expect(res.statusCode).toBe(200);
    return res.json();
  };

  it('stores outputs for known variants only', async () => {
    const exp = await experiment(t, developer);
    const stored = await outputs(exp.id, developer, [['control', 'good a'], ['treatment', 'good b']]);
    expect(stored.statusCode).toBe(201);
    expect(stored.json()).toEqual({ experiment_id: exp.id, stored: 2 });
    const unknown = await outputs(exp.id, developer, [['control', 'x'], ['ghost', 'y']]);
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json().detail).toEqual([{ type: 'value_error', loc: ['body', 'outputs', 1, 'variant_name'], msg: UNKNOWN_VARIANT }]);
    expect((await results(exp.id)).variants.map((v: { n_outputs: number }) => v.n_outputs)).toEqual([1, 1]);
    expect((await outputs(exp.id, viewer, [['control', 'x']])).statusCode).toBe(403);
    expect((await outputs(crypto.randomUUID(), developer, [['control', 'x']])).statusCode).toBe(404);
    expect((await post(`/api/v1/llm-experiments/${exp.id}/outputs`, developer, { outputs: [] })).statusCode).toBe(422);
  });

  it('judges outputs, storing no score for failed calls and replies without a score', async () => {
    const exp = await experiment(t, developer);
    await outputs(exp.id, developer, [
      ['control', 'good 1'], ['control', 'good 2'], ['control', 'noscore'],
      ['treatment', 'bad 1'], ['treatment', 'bad 2'], ['treatment', 'fail'], ['treatment', 'outofrange'],
    ]);
    const { result, calls } = await callsDuring(() => post(`/api/v1/llm-experiments/${exp.id}/judge`, developer));
    expect(result.statusCode).toBe(200);
    expect(result.json()).toEqual({ experiment_id: exp.id, judged: 7, scored: 4, call_failed: 1, no_score: 2, remaining: 0 });
    expect(calls).toBe(8);
    const summary = await results(exp.id);
    expect(summary).toMatchObject({ total_auto_eval: 4, total_auto_eval_unscored: 3 });
    expect(summary.variants).toMatchObject([
      { variant_name: 'control', is_control: true, n_outputs: 3, n_auto_eval: 2, n_auto_eval_unscored: 1, n_pending: 0 },
      { variant_name: 'treatment', is_control: false, n_outputs: 4, n_auto_eval: 2, n_auto_eval_unscored: 2, n_pending: 0 },
    ]);
    expect(summary.variants[0].mean_auto_eval_score).toBeCloseTo(0.9, 12);
    expect(summary.variants[1].mean_auto_eval_score).toBeCloseTo(0.2, 12);
    // Neither variant's scores vary: no test statistic.
    expect(summary.comparisons).toEqual([
      { variant_name: 'treatment', control_variant_name: 'control', difference: expect.closeTo(-0.7, 12), p_value: null, effect_size: null },
    ]);
    const again = await post(`/api/v1/llm-experiments/${exp.id}/judge`, developer);
    expect(again.json()).toMatchObject({ judged: 0, remaining: 0 });
  });

  it('compares variants whose scores vary', async () => {
    const exp = await experiment(t, developer);
    await outputs(exp.id, developer, [
      ['control', 'vary-2'], ['control', 'vary-4'], ['control', 'vary-3'],
      ['treatment', 'vary-7'], ['treatment', 'vary-7'], ['treatment', 'vary-7'],
    ]);
    await post(`/api/v1/llm-experiments/${exp.id}/judge?limit=200&criteria=${encodeURIComponent('concise and correct')}`, developer);
    const [comparison] = (await results(exp.id)).comparisons;
    expect(comparison.difference).toBeCloseTo(0.4, 12);
    expect(comparison.p_value).toBeGreaterThan(0);
    expect(comparison.p_value).toBeLessThan(0.05);
    expect(comparison.effect_size).toBeCloseTo(0.4 / Math.sqrt((2 * 0.01) / 4), 9);
  });

  it('refuses judging without a model, for VIEWER, for unknown experiments and bad limits', async () => {
    const exp = await experiment(t, developer);
    const noModel = await post(`/api/v1/llm-experiments/${exp.id}/judge`, developer, undefined, plain.app);
    expect(noModel.statusCode).toBe(503);
    expect(noModel.json()).toEqual({ detail: NO_LLM_CONFIGURED });
    expect((await post(`/api/v1/llm-experiments/${exp.id}/judge`, viewer)).statusCode).toBe(403);
    expect((await post(`/api/v1/llm-experiments/${crypto.randomUUID()}/judge`, developer)).statusCode).toBe(404);
    expect((await post(`/api/v1/llm-experiments/${exp.id}/judge?limit=0`, developer)).statusCode).toBe(422);
    expect((await post(`/api/v1/llm-experiments/${exp.id}/judge`, undefined)).statusCode).toBe(401);
    expect((await get(`/api/v1/llm-experiments/${crypto.randomUUID()}/results`, viewer)).statusCode).toBe(404);
    expect((await get(`/api/v1/llm-experiments/${exp.id}/results`)).statusCode).toBe(401);
    expect((await get('/api/v1/llm-experiments/nope/results', viewer)).statusCode).toBe(422);
  });
});
