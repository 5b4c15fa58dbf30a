import { NotFound } from '../../platform/errors.js';
import { extractJsonObject, type ChatMessage, type LlmClient } from '../../platform/llm.js';
import { interpretFromTemplate, type ExperimentFacts, type Interpretation, type ResultsFacts } from './interpretation.js';

export type { ExperimentFacts };
import { planSampleSize, type SampleSizePlan } from './planning.js';
import type { DesignRequest, DesignView, InterpretationView, SampleSizeQuery } from './schemas.js';
import { findTemplate, matchTemplate, TEMPLATES, type ExperimentTemplate } from './templates.js';

export const TEMPLATE_NOT_FOUND = 'Template not found';

const DEFAULT_CONFIDENCE = 0.95;
const DEFAULT_POWER = 0.8;
const VARIANT_NAME = /^[A-Za-z0-9_ -]{1,64}$/;

export interface AiDeps {
  llm: LlmClient | undefined;
  /** The experiment; rejects with a 404 when there is none with that id. */
  experiment(id: string): Promise<ExperimentFacts>;
  /** The experiment's current results payload (GET /results). */
  results(id: string): Promise<ResultsFacts>;
}

const isText = (v: unknown, max: number): v is string => typeof v === 'string' && v.trim().length > 0 && v.length <= max;
const textList = (v: unknown, maxItems: number): string[] | undefined =>
  Array.isArray(v) && v.length <= maxItems && v.every((s) => isText(s, 500)) ? (v as string[]) : undefined;

/** Equal split in hundredths that adds up to exactly 100; the control takes the rounding remainder. */
function equalAllocations(count: number): number[] {
  const share = Math.floor(10_000 / count) / 100;
  const control = Math.round((100 - share * (count - 1)) * 100) / 100;
  return [control, ...Array<number>(count - 1).fill(share)];
}

function variantsFor(template: ExperimentTemplate, count: number) {
  const base = template.variants.slice(0, count);
  for (let i = base.length; i < count; i++) base.push({ name: `treatment_${i}`, is_control: false, description: `Treatment ${i}` });
  const allocations = equalAllocations(count);
  return base.map((v, i) => ({ ...v, traffic_allocation: allocations[i] }));
}

function keyFrom(goal: string): string {
  const slug = goal.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 60).replace(/_+$/, '');
  return slug || 'experiment';
}

function nameFrom(goal: string): string {
  const trimmed = goal.trim().replace(/\s+/g, ' ');
  const short = trimmed.length > 80 ? `${trimmed.slice(0, 77)}...` : trimmed;
  return short.charAt(0).toUpperCase() + short.slice(1);
}

const SYSTEM_PROMPT: ChatMessage = {
  role: 'system',
  content: 'You help product teams run controlled experiments. Answer with one JSON object and nothing else.',
};

export type AiService = ReturnType<typeof createAiService>;

/**
 * AI helper routes. Every answer is first built from the templates and the statistics engine; a configured language
 * model may then rewrite the wording (names, hypothesis, narrative). Its reply is checked field by field and any
 * unusable reply leaves the template answer in place. Numbers always come from the statistics engine or the results.
 */
export function createAiService(deps: AiDeps) {
  async function ask(prompt: Record<string, unknown>): Promise<Record<string, unknown> | undefined> {
    if (!deps.llm) return undefined;
    const reply = await deps.llm.complete([SYSTEM_PROMPT, { role: 'user', content: JSON.stringify(prompt) }]);
    return reply === undefined ? undefined : extractJsonObject(reply);
  }

  return {
    templates: (): ExperimentTemplate[] => [...TEMPLATES],

    template(id: string): ExperimentTemplate {
      const template = findTemplate(id);
      if (!template) throw new NotFound(TEMPLATE_NOT_FOUND);
      return template;
    },

    sampleSize(query: SampleSizeQuery): SampleSizePlan {
      return planSampleSize(
        {
          baselineRate: query.baseline_conversion_rate,
          mde: query.mde,
          confidenceLevel: query.confidence_level,
          power: query.power,
          variants: query.n_variants,
          correction: query.correction_method,
          dailyTraffic: query.daily_traffic,
        },
        ['query', 'mde'],
      );
    },

    async design(body: DesignRequest): Promise<DesignView> {
      const template = body.template_id ? findTemplate(body.template_id) : matchTemplate(body.goal);
      if (!template) throw new NotFound(TEMPLATE_NOT_FOUND);
      const count = body.n_variants ?? template.variants.length;
      const confidence = body.confidence_level ?? DEFAULT_CONFIDENCE;
      const plan = planSampleSize(
        {
          baselineRate: body.baseline_conversion_rate ?? template.default_baseline_conversion_rate,
          mde: body.mde ?? template.default_mde,
          confidenceLevel: confidence,
          power: body.power ?? DEFAULT_POWER,
          variants: count,
          correction: 'benjamini_hochberg',
          dailyTraffic: body.daily_traffic,
        },
        ['body', 'mde'],
      );
      const primary = template.metrics.find((m) => m.is_primary)!;
      const design: DesignView = {
        generated_by: 'template',
        template_id: template.id,
        experiment: {
          name: nameFrom(body.goal),
          key: keyFrom(body.goal),
          description: template.description,
          hypothesis: template.hypothesis,
          experiment_type: template.experiment_type,
          variants: variantsFor(template, count),
          metrics: template.metrics.map((m) => ({ ...m, expected_effect: m.is_primary ? plan.mde : null })),
          confidence_level: confidence,
          correction_method: 'benjamini_hochberg',
        },
        sample_size: plan,
        rationale: [
          `Based on the "${template.name}" template (${template.category}).`,
          `Primary metric: ${primary.name} (event ${primary.event_name}), planned for a ${+(plan.mde * 100).toPrecision(4)}% relative lift.`,
          plan.explanation,
          count > 2
            ? 'With several treatments, Benjamini-Hochberg correction keeps false discoveries in check; each comparison is planned at alpha / (variants - 1).'
            : 'One treatment against the control: no multiple-comparison correction is needed.',
        ],
      };
      const reply = await ask({
        task: 'Improve the wording of this experiment design. Keep the number and order of variants; the first is the control.',
        goal: body.goal,
        design: design.experiment,
        answer_format: {
          name: 'short experiment name',
          hypothesis: 'If ..., then ..., because ...',
          description: 'one or two sentences',
          variants: [{ name: 'snake_case name', description: 'what this variant shows' }],
          rationale: ['short reasons for the design'],
        },
      });
      const variants = reply?.variants;
      const usable =
        reply &&
        isText(reply.name, 120) &&
        isText(reply.hypothesis, 1000) &&
        isText(reply.description, 2000) &&
        Array.isArray(variants) &&
        variants.length === count &&
        variants.every((v: { name?: unknown; description?: unknown }) => typeof v?.name === 'string' && VARIANT_NAME.test(v.name) && isText(v.description, 500)) &&
        new Set(variants.map((v: { name: string }) => v.name)).size === count &&
        textList(reply.rationale, 10);
      if (!usable) return design;
      return {
        ...design,
        generated_by: 'llm',
        experiment: {
          ...design.experiment,
          name: reply.name as string,
          hypothesis: reply.hypothesis as string,
          description: reply.description as string,
          variants: design.experiment.variants.map((v, i) => ({ ...v, name: variants[i].name, description: variants[i].description })),
        },
        rationale: [...(reply.rationale as string[]), plan.explanation],
      };
    },

    async interpret(experimentId: string): Promise<InterpretationView> {
      const experiment = await deps.experiment(experimentId);
      // A draft has never assigned anyone: there are no results to read.
      const results = experiment.status === 'draft' ? undefined : await deps.results(experimentId);
      const facts: Interpretation = interpretFromTemplate(experiment, results);
      const base = { experiment_id: experiment.id, experiment_name: experiment.name, status: experiment.status };
      const reply = results
        ? await ask({
            task: 'Explain these experiment results to a product team. Do not change the recommendation or any number.',
            experiment: { name: experiment.name, hypothesis: experiment.hypothesis, variants: experiment.variants },
            results,
            facts,
            answer_format: { summary: 'two or three sentences', key_findings: ['one finding per line'], next_steps: ['concrete steps'] },
          })
        : undefined;
      const findings = textList(reply?.key_findings, 20);
      const steps = textList(reply?.next_steps, 10);
      if (reply && isText(reply.summary, 2000) && findings && steps) {
        return { ...base, generated_by: 'llm', ...facts, summary: reply.summary, key_findings: findings, next_steps: steps };
      }
      return { ...base, generated_by: 'template', ...facts };
    },
  };
}
