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
      body: SampleSizeBody,
      response: { 200: SampleSizeView, ...errorResponses(401, 422) },
    },
  }, (req) => power.sampleSize(req.body));

  app.post('/mde', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'powerMde', summary: 'Smallest effect a given sample per variant detects',
      body: MdeBody,
      response: { 200: MdeView, ...errorResponses(401, 422) },
    },
  }, (req) => power.mde(req.body));

  app.post('/runtime', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'powerRuntime', summary: 'Days until every variant reaches the required sample',
      body: RuntimeBody,
      response: { 200: RuntimeView, ...errorResponses(401, 422) },
    },
  }, (req) => power.runtime(req.body));

  app.post('/plan', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'powerPlan', summary: 'Sample size, runtime and built-in advice (generated_by template)',
      body: PlanBody,
      response: { 200: PlanView, ...errorResponses(401, 422) },
    },
  }, (req) => power.plan(req.body));
};
