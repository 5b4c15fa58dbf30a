import { Type, type Static } from 'typebox';
import { Nullable, Uuid } from '../../platform/schemas.js';

export const ExperimentParams = Type.Object({ experiment_id: Uuid() });

export const OutputsCreate = Type.Object(
  {
    outputs: Type.Array(
      Type.Object(
        {
          variant_name: Type.String({ minLength: 1, maxLength: 255, description: "One of the experiment's variant names" }),
          prompt: Type.Optional(Nullable(Type.String({ maxLength: 100_000 }))),
          output: Type.String({ minLength: 1, maxLength: 100_000 }),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 1000 },
    ),
  },
  { additionalProperties: false, examples: [
    {
      outputs: [
        {
          variant_name: 'control',
          prompt: 'Summarise this order in one sentence.',
          output: 'Two items, shipped tomorrow.',
        },
        {
          variant_name: 'friendly',
          prompt: 'Summarise this order in one sentence.',
          output: 'Great news: your two items ship tomorrow!',
        },
      ],
    },
  ] },
);
export type OutputsCreate = Static<typeof OutputsCreate>;

export const OutputsStored = Type.Object({ experiment_id: Uuid(), stored: Type.Integer() });

export const JudgeQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'Outputs judged by this call, oldest first' }),
  rejudge: Type.Boolean({ default: false, description: 'Judge outputs that already have an evaluation again' }),
  criteria: Type.Optional(Type.String({ minLength: 1, maxLength: 2000, description: 'What a good answer does' })),
});
export type JudgeQuery = Static<typeof JudgeQuery>;

const Count = Type.Integer({ minimum: 0 });

export const JudgeSummary = Type.Object({
  experiment_id: Uuid(),
  judged: Count,
  scored: Count,
  call_failed: Count,
  no_score: Count,
  remaining: Type.Integer({ minimum: 0, description: 'Outputs not judged yet' }),
});
export type JudgeSummary = Static<typeof JudgeSummary>;

export const VariantResult = Type.Object({
  variant_name: Type.String(),
  is_control: Type.Boolean(),
  n_outputs: Count,
  n_pending: Type.Integer({ minimum: 0, description: 'Outputs not judged yet' }),
  n_auto_eval: Type.Integer({ minimum: 0, description: 'Outputs with a score' }),
  n_auto_eval_unscored: Type.Integer({ minimum: 0, description: 'Judged outputs without a score (left out of the numbers)' }),
  mean_auto_eval_score: Nullable(Type.Number()),
  std_auto_eval_score: Nullable(Type.Number()),
});

export const Comparison = Type.Object({
  variant_name: Type.String(),
  control_variant_name: Type.String(),
  difference: Nullable(Type.Number({ description: 'Mean score of the variant minus the control' })),
  p_value: Nullable(Type.Number({ description: "Welch's t-test; null when neither variant's scores vary or a variant has fewer than two" })),
  effect_size: Nullable(Type.Number({ description: "Cohen's d with the pooled standard deviation; null like p_value" })),
});

export const LlmResults = Type.Object({
  experiment_id: Uuid(),
  variants: Type.Array(VariantResult),
  comparisons: Type.Array(Comparison),
  total_auto_eval: Count,
  total_auto_eval_unscored: Count,
});
export type LlmResults = Static<typeof LlmResults>;
