import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { signedIn } from '../../platform/auth.js';
import { errorResponses } from '../../platform/schemas.js';
import { MdeBody, MdeView, PlanBody, PlanView, RuntimeBody, RuntimeView, SampleSizeBody, SampleSizeView } from './schemas.js';
import type { PowerService } from './service.js';

const tags = ['power'];

export const powerRoutes: FastifyPluginAsyncTypebox<{ power: PowerService }> = async (app, { power }) => {
  app.post('/sample-size', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'powerSampleSize', summary: 'Users per variant to detect an effect on a conversion rate',
      description: 'Any signed-in role. Users per variant needed to detect a relative effect (mde) on a baseline conversion rate at the given confidence level and power; a calculation leaving floating-point range is 422.',
      body: SampleSizeBody,
      response: { 200: SampleSizeView, ...errorResponses(401, 422) },
    },
  }, (req) => power.sampleSize(req.body));

  app.post('/mde', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'powerMde', summary: 'Smallest effect a given sample per variant detects',
      description: 'Any signed-in role. The smallest relative effect that the given sample per variant detects at the given baseline, confidence level and power. Bounds: n_variants at most 100, samples at most 10^12 (422 beyond).',
      body: MdeBody,
      response: { 200: MdeView, ...errorResponses(401, 422) },
    },
  }, (req) => power.mde(req.body));

  app.post('/runtime', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'powerRuntime', summary: 'Days until every variant reaches the required sample',
      description: 'Any signed-in role. Days until every variant reaches the required sample, from daily traffic, the share of it in the experiment and the number of variants. Values above 10^12 are 422.',
      body: RuntimeBody,
      response: { 200: RuntimeView, ...errorResponses(401, 422) },
    },
  }, (req) => power.runtime(req.body));

  app.post('/plan', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'powerPlan', summary: 'Sample size, runtime and built-in advice (generated_by template)',
      description: 'Any signed-in role. Sample size per variant, runtime in days at the given daily traffic and built-in advice; generated_by is always template. Out-of-range inputs are 422.',
      body: PlanBody,
      response: { 200: PlanView, ...errorResponses(401, 422) },
    },
  }, (req) => power.plan(req.body));
};
