import { Type, type Static } from 'typebox';
import { WIZARD_DRAFT_STATUSES } from '../../db/schema/wizard.js';
import { DateTime, Nullable, StringEnum, Uuid, ValidationItem } from '../../platform/schemas.js';
import { ExperimentCreate } from '../experiments/schemas.js';

/** Steps of the dashboard wizard (basics, variants, metrics, targeting, statistics); any field may come at any step. */
export const WIZARD_STEPS = 5;

/** Any part of an experiment request, each field checked as on create, plus the minimum detectable effect. */
export const WizardData = Type.Object(
  {
    ...Type.Partial(Type.Omit(ExperimentCreate, ['status'])).properties,
    mde: Type.Optional(
      Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1, description: "Becomes the primary metric's expected_effect on submit" }),
    ),
  },
  { additionalProperties: false, examples: [
    { name: 'Checkout button colour', key: 'checkout-button-colour', experiment_type: 'a_b', mde: 0.1 },
  ] },
);
export type WizardData = Static<typeof WizardData>;

export const DraftCreate = Type.Object({ data: Type.Optional(WizardData) }, { additionalProperties: false, examples: [
  {
    data: {
      name: 'Checkout button colour',
      key: 'checkout-button-colour',
      hypothesis: 'A green pay button raises checkout conversion',
    },
  },
] });
export type DraftCreate = Static<typeof DraftCreate>;

export const DraftStep = Type.Object(
  { step: Type.Integer({ minimum: 1, maximum: WIZARD_STEPS }), data: WizardData },
  { additionalProperties: false, examples: [
    {
      step: 2,
      data: {
        variants: [
          { name: 'control', is_control: true, traffic_allocation: 50, configuration: { button_colour: 'blue' } },
          { name: 'green', is_control: false, traffic_allocation: 50, configuration: { button_colour: 'green' } },
        ],
      },
    },
  ] },
);
export type DraftStep = Static<typeof DraftStep>;

export const DraftView = Type.Object({
  id: Uuid(),
  user_id: Uuid(),
  current_step: Type.Integer(),
  data: Type.Object({}, { additionalProperties: true }),
  status: StringEnum(WIZARD_DRAFT_STATUSES),
  experiment_id: Nullable(Uuid()),
  created_at: DateTime(),
  updated_at: DateTime(),
});
export type DraftView = Static<typeof DraftView>;

export const ValidationReport = Type.Object({ valid: Type.Boolean(), errors: Type.Array(ValidationItem) });

export const DraftParams = Type.Object({ draft_id: Uuid() });
