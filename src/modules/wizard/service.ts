import { randomUUID } from 'node:crypto';
import type { FastifySchemaCompiler } from 'fastify';
import type { Db } from '../../db/client.js';
import type { WizardDraftRow } from '../../db/schema/wizard.js';
import type { AuditLog } from '../../platform/audit.js';
import type { Actor } from '../../platform/auth.js';
import type { Clock } from '../../platform/clock.js';
import { Conflict, NotFound, Unprocessable, type ValidationIssue } from '../../platform/errors.js';
import { toValidationIssues } from '../../platform/validation.js';
import { validatorCompiler } from '../../platform/validator.js';
import { validateRuleSet } from '../../targeting/index.js';
import { metricIssues, variantIssues } from '../experiments/service.js';
import { ExperimentCreate, type ExperimentView } from '../experiments/schemas.js';
import type { DraftCreate, DraftStep, DraftView, WizardData } from './schemas.js';
import * as store from './store.js';

export const DRAFT_NOT_FOUND = 'Wizard draft not found';
export const DRAFT_SUBMITTED = 'This wizard draft was already submitted';

/** The create route's own body validation, so a draft is judged exactly as the experiment it becomes. */
const checkCreateBody = validatorCompiler({ schema: ExperimentCreate, httpPart: 'body' } as Parameters<FastifySchemaCompiler<unknown>>[0]) as
  ((data: unknown) => boolean) & { errors?: Parameters<typeof toValidationIssues>[0] | null };

function toDraftView(row: WizardDraftRow): DraftView {
  return {
    id: row.id,
    user_id: row.userId,
    current_step: row.currentStep,
    data: row.data,
    status: row.status,
    experiment_id: row.experimentId,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/**
 * The experiment request a draft stands for: its fields, with `mde` as the primary metric's expected_effect
 * (the metric flagged primary, else the first one).
 */
export function experimentRequest(data: WizardData): Record<string, unknown> {
  const { mde, ...fields } = data;
  if (mde === undefined || !fields.metrics?.length) return { ...fields };
  const primary = Math.max(0, fields.metrics.findIndex((m) => m.is_primary === true));
  return { ...fields, metrics: fields.metrics.map((m, i) => (i === primary ? { ...m, expected_effect: mde } : m)) };
}

/** Every problem the create route would report for this request, located under `data`. */
export function requestIssues(request: Record<string, unknown>): ValidationIssue[] {
  const body = structuredClone(request);
  if (!checkCreateBody(body)) return toValidationIssues(checkCreateBody.errors ?? [], 'data');
  const create = body as ExperimentCreate;
  const rulesProblem = create.targeting_rules ? validateRuleSet(create.targeting_rules) : null;
  return [
    ...variantIssues(create.variants, ['data', 'variants']),
    ...metricIssues(create.metrics, ['data', 'metrics']),
    ...(rulesProblem ? [{ type: 'value_error', loc: ['data', 'targeting_rules'], msg: rulesProblem }] : []),
  ];
}

export type WizardService = ReturnType<typeof createWizardService>;

export function createWizardService(deps: {
  db: Db;
  audit: AuditLog;
  clock: Clock;
  experiments: { create(actor: Actor, body: ExperimentCreate): Promise<ExperimentView> };
}) {
  const { db, audit, clock } = deps;

  async function mustFind(actor: Actor, id: string): Promise<WizardDraftRow> {
    const row = await store.findOwnDraft(db, id, actor.id);
    if (!row) throw new NotFound(DRAFT_NOT_FOUND);
    return row;
  }

  return {
    async create(actor: Actor, body: DraftCreate): Promise<DraftView> {
      return db.transaction(async (tx) => {
        const now = clock.now();
        const row = await store.insertDraft(tx, {
          id: randomUUID(),
          userId: actor.id,
          currentStep: 1,
          data: body.data ?? {},
          status: 'draft',
          createdAt: now,
          updatedAt: now,
        });
        await audit.record(tx, actor, { action: 'wizard_draft_create', entityType: 'wizard_draft', entityId: row.id });
        return toDraftView(row);
      });
    },

    async list(actor: Actor): Promise<DraftView[]> {
      return (await store.listOwnDrafts(db, actor.id)).map(toDraftView);
    },

    get: async (actor: Actor, id: string) => toDraftView(await mustFind(actor, id)),

    /** Records a step: the fields sent replace the draft's ones, the rest stay. */
    async step(actor: Actor, id: string, body: DraftStep): Promise<DraftView> {
      return db.transaction(async (tx) => {
        const row = await store.lockOwnDraft(tx, id, actor.id);
        if (!row) throw new NotFound(DRAFT_NOT_FOUND);
        if (row.status !== 'draft') throw new Conflict(DRAFT_SUBMITTED);
        const next = await store.updateDraft(tx, id, {
          data: { ...row.data, ...body.data },
          currentStep: body.step,
          updatedAt: clock.now(),
        });
        await audit.record(tx, actor, {
          action: 'wizard_draft_update',
          entityType: 'wizard_draft',
          entityId: id,
          details: { step: body.step, fields: Object.keys(body.data).sort() },
        });
        return toDraftView(next);
      });
    },

    validate(data: WizardData) {
      const errors = requestIssues(experimentRequest(data));
      return { valid: errors.length === 0, errors };
    },

    /** Creates the experiment as the create route would (same checks), then marks the draft submitted. */
    async submit(actor: Actor, id: string): Promise<ExperimentView> {
      const draft = await mustFind(actor, id);
      if (draft.status !== 'draft') throw new Conflict(DRAFT_SUBMITTED);
      const request = experimentRequest(draft.data as WizardData);
      const issues = requestIssues(request);
      if (issues.length) throw new Unprocessable(issues);
      const experiment = await deps.experiments.create(actor, request as ExperimentCreate);
      await db.transaction(async (tx) => {
        await store.updateDraft(tx, id, { status: 'submitted', experimentId: experiment.id, updatedAt: clock.now() });
        await audit.record(tx, actor, {
          action: 'wizard_draft_submit',
          entityType: 'wizard_draft',
          entityId: id,
          details: { experiment_id: experiment.id },
        });
      });
      return experiment;
    },
  };
}
