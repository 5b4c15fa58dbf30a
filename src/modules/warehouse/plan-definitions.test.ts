import { describe, expect, it } from 'vitest';
import type { DefinitionSettings } from '../../analysis/types.js';
import { DIALECTS } from './dialects/index.js';
import { parseTable } from './identifiers.js';
import { isSingleSelect, type AssignmentSourcePlan } from './plan.js';
import { definitionStatement, type EventSourcePlan } from './plan-definitions.js';
import { WAREHOUSE_TYPES } from './types.js';

const window = { start: new Date('2026-03-01T00:00:00Z'), end: new Date('2026-03-15T00:00:00Z') };
const arms = [{ label: 'control', arm: 0 }, { label: 'treatment', arm: 1 }];
const base: DefinitionSettings = {
  id: '00000000-0000-4000-8000-0000000000d1', version: 1, kind: 'mean', value: { event_name: 'revenue', aggregate: 'sum' },
  numerator: null, denominator: null, quantile: null, capping: { type: 'none' },
};
const DEFINITIONS: Record<string, DefinitionSettings> = {
  proportion: { ...base, kind: 'proportion', value: { event_name: 'purchase', aggregate: 'count' } },
  absolute: { ...base, capping: { type: 'absolute', value: 500 } },
  ratio: {
    ...base, kind: 'ratio', value: null, capping: { type: 'percentile', p: 0.999 },
    numerator: { event_name: 'revenue', aggregate: 'sum' }, denominator: { event_name: 'session_start', aggregate: 'count' },
  },
  quantile: { ...base, kind: 'quantile', value: { event_name: 'page_load', aggregate: 'sum' }, quantile: 0.9 },
};

function plans(type: (typeof WAREHOUSE_TYPES)[number]) {
  const [schema, tableOf] = type === 'bigquery' ? ['p.analytics', (t: string) => `p.analytics.${t}`]
    : type === 'snowflake' || type === 'databricks' ? ['db.analytics', (t: string) => `db.analytics.${t}`] : ['analytics', (t: string) => `analytics.${t}`];
  const assignment: AssignmentSourcePlan = {
    table: parseTable(type, tableOf('exposures'))!, columns: { unit_id: 'user_id', variant: 'variant', exposed_at: 'exposed_at' }, filters: [],
  };
  const events: EventSourcePlan = {
    table: parseTable(type, tableOf('events'))!,
    columns: { unit_id: 'user_id', event_at: 'event_at', event_name: 'event', value: 'amount' },
    filters: [{ column: 'is_test', value: false }],
    conversionWindowHours: 72,
  };
  return { schema, assignment, events };
}

describe('definition statements per dialect', () => {
  for (const type of WAREHOUSE_TYPES) {
    it(`renders proportion, capped mean, capped ratio and quantile statements for ${type}`, () => {
      const d = DIALECTS[type];
      const { assignment, events } = plans(type);
      const statements = Object.fromEntries(Object.entries(DEFINITIONS).map(([k, def]) => [k, definitionStatement(d, assignment, events, def, arms, window, 0.95)]));
      expect(statements).toMatchSnapshot();
      for (const s of Object.values(statements)) {
        expect(isSingleSelect(s.text)).toBe(true);
        // Event names, labels, the cap and the quantile's p and z travel as parameters.
        expect(s.text).not.toMatch(/revenue|session_start|page_load|'control'|500/);
      }
      expect(statements.ratio.params.filter((p) => p.type === 'text').map((p) => p.value)).toEqual(['revenue', 'session_start', 'control', 'treatment', 'revenue', 'session_start']);
      // The pooled percentile cap is a literal p (several dialects take only a constant there).
      expect(statements.ratio.text).toContain('0.999');
    });
  }
});
