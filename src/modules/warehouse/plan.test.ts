import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DIALECTS } from './dialects/index.js';
import { FILTER_TEXT, parseTable } from './identifiers.js';
import { diagnosticsStatement, isSingleSelect, metricStatement, previewStatement, type AssignmentSourcePlan, type MetricSourcePlan } from './plan.js';
import { WAREHOUSE_TYPES, type WarehouseType } from './types.js';

const window = { start: new Date('2026-03-01T00:00:00Z'), end: new Date('2026-03-15T00:00:00Z') };
const TABLES: Record<WarehouseType, [string, string]> = {
  postgres: ['analytics.exposures', 'analytics.events'],
  redshift: ['analytics.exposures', 'analytics.events'],
  duckdb: ['main.exposures', 'main.events'],
  bigquery: ['my_project.analytics.exposures', 'my_project.analytics.events'],
  snowflake: ['SHOP.ANALYTICS.EXPOSURES', 'SHOP.ANALYTICS.EVENTS'],
  databricks: ['main.analytics.exposures', 'main.analytics.events'],
  clickhouse: ['analytics.exposures', 'analytics.events'],
};

function plans(type: WarehouseType) {
  const assignment: AssignmentSourcePlan = {
    table: parseTable(type, TABLES[type][0])!,
    columns: { unit_id: 'user_id', variant: 'variant', exposed_at: 'exposed_at' },
    filters: [{ column: 'country', value: 'DE' }],
  };
  const mean: MetricSourcePlan = {
    table: parseTable(type, TABLES[type][1])!,
    columns: { unit_id: 'user_id', event_at: 'event_at', value: 'amount' },
    filters: [{ column: 'event_name', value: 'purchase' }, { column: 'is_test', value: false }],
    metricType: 'mean',
    conversionWindowHours: 72,
    capValue: 500,
  };
  const proportion: MetricSourcePlan = { ...mean, columns: { unit_id: 'user_id', event_at: 'event_at' }, metricType: 'proportion', conversionWindowHours: null, capValue: null };
  return { assignment, mean, proportion };
}

describe('query plan SQL per dialect', () => {
  for (const type of WAREHOUSE_TYPES) {
    it(`renders the diagnostics, metric and preview statements for ${type}`, () => {
      const d = DIALECTS[type];
      const { assignment, mean, proportion } = plans(type);
      const statements = {
        diagnostics: diagnosticsStatement(d, assignment, window),
        mean: metricStatement(d, assignment, mean, window),
        proportion: metricStatement(d, assignment, proportion, window),
        preview: previewStatement(d, { table: assignment.table, unitColumn: 'user_id', timeColumn: 'exposed_at', labelColumn: 'variant', filters: [] }, window),
      };
      expect(statements).toMatchSnapshot();
      for (const s of Object.values(statements)) expect(isSingleSelect(s.text)).toBe(true);
      // Values travel as parameters: the window, the filter values, the conversion window and the cap.
      expect(statements.mean.params.map((p) => p.value)).toEqual([window.start, window.end, 'DE', window.start, window.end, 'purchase', false, 72, 500]);
      expect(statements.mean.params.map((p) => p.type)).toEqual(['timestamp', 'timestamp', 'text', 'timestamp', 'timestamp', 'text', 'boolean', 'integer', 'float']);
      expect(statements.mean.text).not.toContain('purchase');
    });
  }
});

describe('identifier and value rules', () => {
  it('takes fully qualified names with the part count of each warehouse', () => {
    expect(parseTable('postgres', 'public.events')).toEqual(['public', 'events']);
    expect(parseTable('postgres', 'events')).toBeUndefined();
    expect(parseTable('bigquery', 'proj.ds.events')).toEqual(['proj', 'ds', 'events']);
    expect(parseTable('bigquery', 'ds.events')).toBeUndefined();
    expect(parseTable('clickhouse', 'db.events')).toEqual(['db', 'events']);
    expect(parseTable('snowflake', 'DB.S.T$1')).toEqual(['DB', 'S', 'T$1']);
    expect(parseTable('bigquery', 'p.d.t$1')).toBeUndefined();
    expect(parseTable('postgres', `s.${'a'.repeat(64)}`)).toBeUndefined();
    expect(parseTable('duckdb', `s.${'a'.repeat(128)}`)).toEqual(['s', 'a'.repeat(128)]);
  });

  it('never accepts a part that could close a quoted identifier', () => {
    fc.assert(
      fc.property(fc.string(), fc.constantFrom(...WAREHOUSE_TYPES), (name, type) => {
        const parts = parseTable(type, `a.b.${name}`) ?? parseTable(type, `a.${name}`);
        if (parts) for (const part of parts) expect(part).not.toMatch(/["`'\\\s;.]/);
      }),
    );
  });

  it('limits filter text to letters, digits, spaces and _ . : @ / + -', () => {
    expect(FILTER_TEXT.test('user@example.com 2026-01-01T10:00:00+02:00 a_b/c')).toBe(true);
    expect(FILTER_TEXT.test('Zürich')).toBe(true);
    for (const bad of ["x' OR '1'='1", 'a;b', 'a"b', 'a`b', 'a\\b', 'a\nb', '%']) expect(FILTER_TEXT.test(bad)).toBe(false);
  });
});
