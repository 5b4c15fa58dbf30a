import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf, role, signedIn } from '../../platform/auth.js';
import { errorResponses } from '../../platform/schemas.js';
import { ExperimentView } from '../experiments/schemas.js';
import { DraftCreate, DraftParams, DraftStep, DraftView, ValidationReport, WizardData } from './schemas.js';
import type { WizardService } from './service.js';

const tags = ['wizard'];
/** Spec, Versioning 5: all six wizard operations are deprecated; they keep URL, shape and behaviour. */
const deprecated = true;
/** Drafts become experiments, so writing them takes the roles that create experiments. */
const WRITE = role('ADMIN', 'DEVELOPER');

export const wizardRoutes: FastifyPluginAsyncTypebox<{ wizard: WizardService }> = async (app, { wizard }) => {
  app.post('/drafts', {
    config: { access: WRITE },
    schema: {
      tags, deprecated, operationId: 'createWizardDraft', summary: 'Start an experiment draft (deprecated)',
      description: 'Deprecated. ADMIN and DEVELOPER. Starts a draft owned by the caller that collects the experiment fields step by step.',
      body: DraftCreate,
      response: { 201: DraftView, ...errorResponses(401, 403, 422) },
    },
  }, async (req, reply) => reply.code(201).send(await wizard.create(actorOf(req), req.body)));

  app.get('/drafts', {
    config: { access: signedIn() },
    schema: {
      tags, deprecated, operationId: 'listWizardDrafts', summary: "The caller's drafts, latest first (deprecated)",
      description: "Deprecated with the whole wizard: create experiments with POST /api/v1/experiments/. Any signed-in role; the caller's own drafts, most recently changed first.",
      response: { 200: Type.Array(DraftView), ...errorResponses(401) },
    },
  }, (req) => wizard.list(actorOf(req)));

  app.get('/drafts/:draft_id', {
    config: { access: signedIn() },
    schema: {
      tags, deprecated, operationId: 'readWizardDraft', summary: 'One of the caller\'s drafts (deprecated)',
      description: "Deprecated. One of the caller's own drafts; another account's draft or an unknown id is 404.",
      params: DraftParams,
      response: { 200: DraftView, ...errorResponses(401, 404, 422) },
    },
  }, (req) => wizard.get(actorOf(req), req.params.draft_id));

  app.put('/drafts/:draft_id/step', {
    config: { access: WRITE },
    schema: {
      tags, deprecated, operationId: 'updateWizardDraftStep', summary: 'Record a wizard step (deprecated)',
      description: "Deprecated. ADMIN and DEVELOPER. Stores the data of one step in the caller's draft; a submitted draft is 409.",
      params: DraftParams, body: DraftStep,
      response: { 200: DraftView, ...errorResponses(401, 403, 404, 409, 422) },
    },
  }, (req) => wizard.step(actorOf(req), req.params.draft_id, req.body));

  app.post('/validate', {
    config: { access: signedIn() },
    schema: {
      tags, deprecated, operationId: 'validateWizardData', summary: 'Check draft data against the experiment rules (deprecated)',
      description: 'Deprecated. Any signed-in role. Checks draft data against the experiment create rules and answers valid with the list of problems; nothing is stored.',
      body: WizardData,
      response: { 200: ValidationReport, ...errorResponses(401, 422) },
    },
  }, (req) => wizard.validate(req.body));

  app.post('/drafts/:draft_id/submit', {
    config: { access: WRITE },
    schema: {
      tags, deprecated, operationId: 'submitWizardDraft', summary: 'Create the experiment from a draft (deprecated)',
      description: 'Deprecated. ADMIN and DEVELOPER. Creates the experiment from the draft (its mde becomes the primary metric expected_effect); invalid data is 422 and a draft submitted before is 409.',
      params: DraftParams,
      response: { 201: ExperimentView, ...errorResponses(401, 403, 404, 409, 422, 501) },
    },
  }, async (req, reply) => reply.code(201).send(await wizard.submit(actorOf(req), req.params.draft_id)));
};
