import { Type } from 'typebox';
import { CORRECTION_METHODS } from '../experiments/domain.js';
import { DateTime, Nullable, StringEnum, Uuid } from '../../platform/schemas.js';

const Count = Type.Integer({ minimum: 0 });

export const PairParams = Type.Object({ exp_a_id: Uuid(), exp_b_id: Uuid() });

export const InteractionScan = Type.Object({
  experiments_scanned: Count,
  pairs: Type.Array(Type.Object({
    experiment_a_id: Uuid(),
    experiment_a_name: Type.String(),
    experiment_b_id: Uuid(),
    experiment_b_name: Type.String(),
    overlapping_users: Count,
    share_of_a: Type.Number({ description: "Share of experiment A's assigned users also in B" }),
    share_of_b: Type.Number(),
  })),
  computed_at: DateTime(),
});

export const InteractionPair = Type.Object({
  experiment_a_id: Uuid(),
  experiment_b_id: Uuid(),
  overlapping_users: Count,
  analyses: Type.Array(Type.Object({
    experiment_id: Uuid({ description: 'Whose primary metric and treatments are tested, across the other experiment' }),
    metric_id: Uuid(),
    metric_name: Type.String(),
    correction_method: StringEnum(CORRECTION_METHODS),
    confidence_level: Type.Number(),
    cells: Type.Array(Type.Object({
      variant_id: Uuid(), other_variant_id: Uuid(), users: Count, conversions: Count, rate: Nullable(Type.Number()),
    })),
    tests: Type.Array(Type.Object({
      variant_id: Uuid(),
      other_variant_id: Uuid(),
      interaction: Nullable(Type.Number({ description: 'Difference of the treatment effect in the other variant and in its control' })),
      std_error: Nullable(Type.Number()),
      p_value: Nullable(Type.Number()),
      adjusted_p_value: Nullable(Type.Number()),
      is_significant: Type.Boolean(),
    })),
  })),
  analysis_status: StringEnum(['beta']),
  analysis_notice: Type.String(),
  computed_at: DateTime(),
});
