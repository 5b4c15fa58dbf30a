import { Type, type Static } from 'typebox';
import { DateTime, Uuid } from '../../platform/schemas.js';

export const SummaryQuery = Type.Object({
  window_minutes: Type.Optional(Type.Integer({ minimum: 1, maximum: 1440, description: 'Default: the global safety window' })),
});
export type SummaryQuery = Static<typeof SummaryQuery>;

const Counts = {
  error_count: Type.Integer({ description: 'Counted error reports (trusted keys) in the window' }),
  error_rate: Type.Number({ description: 'error_count per minute of the window' }),
  uncounted_error_count: Type.Integer({ description: 'Reports stored with source client: never counted toward rollback' }),
};

export const Summary = Type.Object({
  window_minutes: Type.Integer(),
  window_start: DateTime(),
  generated_at: DateTime(),
  ...Counts,
  flags: Type.Array(Type.Object({ flag_id: Uuid(), flag_key: Type.String(), ...Counts }), {
    description: 'The flags with error reports in the window, most counted errors first (at most 100)',
  }),
});
export type Summary = Static<typeof Summary>;
