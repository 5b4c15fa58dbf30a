/**
 * Warehouse statements of metric library definitions (issue 32) beside an inline metric's, on an embedded DuckDB
 * file of 1,000,000 exposed units and 3,000,000 events (revenue, page views, load times). Each statement is the
 * module's generated SQL (plan.ts, plan-definitions.ts) run on the DuckDB driver the module uses; the reference is the
 * inline mean metric capped at 500 (one statement of an analysis today). Rounds alternate the statements and the
 * medians are compared, since the machine is shared.
 * Run: npx tsx bench/warehouse-definitions.ts   (ROUNDS, default 3)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { DefinitionSettings } from '../src/analysis/types.js';
import { DIALECTS } from '../src/modules/warehouse/dialects/index.js';
import { metricStatement, type AssignmentSourcePlan } from '../src/modules/warehouse/plan.js';
import { definitionStatement, type EventSourcePlan } from '../src/modules/warehouse/plan-definitions.js';
import type { Statement } from '../src/modules/warehouse/types.js';
import { machine, writeSection } from './lib.js';

const ROUNDS = Number(process.env.ROUNDS ?? 3);
const UNITS = 1_000_000;
const EVENTS = 3_000_000;
const window = { start: new Date('2026-03-01T00:00:00Z'), end: new Date('2026-03-15T00:00:00Z') };
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const d = DIALECTS.duckdb;

const assignment: AssignmentSourcePlan = { table: ['main', 'exposures'], columns: { unit_id: 'user_id', variant: 'variant', exposed_at: 'ts' }, filters: [] };
const events: EventSourcePlan = { table: ['main', 'events'], columns: { unit_id: 'user_id', event_at: 'ts', event_name: 'event', value: 'amount' }, filters: [], conversionWindowHours: null };
const arms = [{ label: 'control', arm: 0 }, { label: 'treatment', arm: 1 }];
const base: DefinitionSettings = {
  id: 'bench', version: 1, kind: 'mean', value: { event_name: 'revenue', aggregate: 'sum' }, numerator: null, denominator: null, quantile: null, capping: { type: 'none' },
};

const statements: Array<[string, Statement]> = [
  ['inline mean metric, capped at 500 (reference)', metricStatement(d, assignment, {
    table: ['main', 'events'], columns: { unit_id: 'user_id', event_at: 'ts', value: 'amount' }, filters: [{ column: 'event', value: 'revenue' }],
    metricType: 'mean', conversionWindowHours: null, capValue: 500,
  }, window)],
  ['definition: mean, absolute cap 500', definitionStatement(d, assignment, events, { ...base, capping: { type: 'absolute', value: 500 } }, arms, window, 0.95)],
  ['definition: mean, percentile cap p 0.999', definitionStatement(d, assignment, events, { ...base, capping: { type: 'percentile', p: 0.999 } }, arms, window, 0.95)],
  ['definition: ratio revenue / page views, percentile cap p 0.999', definitionStatement(d, assignment, events, {
    ...base, kind: 'ratio', value: null, capping: { type: 'percentile', p: 0.999 },
    numerator: { event_name: 'revenue', aggregate: 'sum' }, denominator: { event_name: 'page_view', aggregate: 'count' },
  }, arms, window, 0.95)],
  ['definition: p90 of load time', definitionStatement(d, assignment, events, { ...base, kind: 'quantile', value: { event_name: 'load_time', aggregate: 'sum' }, quantile: 0.9 }, arms, window, 0.95)],
];

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'uplift-wh-defs-bench-'));
  const instance = await DuckDBInstance.create(join(dir, 'bench.duckdb'));
  const c = await instance.connect();
  await c.run("SET TimeZone = 'UTC'");
  await c.run(`CREATE TABLE exposures AS SELECT 'u' || i AS user_id, CASE WHEN i % 2 = 0 THEN 'control' ELSE 'treatment' END AS variant,
    TIMESTAMP '2026-03-01' + to_seconds(CAST((i * 7919) % 1209600 AS BIGINT)) AS ts FROM range(${UNITS}) t(i)`);
  await c.run(`CREATE TABLE events AS SELECT 'u' || ((j * 104729) % ${UNITS}) AS user_id,
    CASE j % 3 WHEN 0 THEN 'revenue' WHEN 1 THEN 'page_view' ELSE 'load_time' END AS event,
    TIMESTAMP '2026-03-01' + to_seconds(CAST((j * 15485863) % 1209600 AS BIGINT)) AS ts, CAST((j % 1000) / 10.0 AS DOUBLE) AS amount
    FROM range(${EVENTS}) t(j)`);
  const loadBefore = loadavg()[0].toFixed(1);
  const times = new Map(statements.map(([label]) => [label, [] as number[]]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [label, s] of statements) {
      const started = performance.now();
      await c.runAndReadAll(s.text, s.params.map((p) => (p.value instanceof Date ? p.value.toISOString() : p.value)));
      times.get(label)!.push(Math.round(performance.now() - started));
      console.log(label, times.get(label)!.at(-1));
    }
  }
  const loadAfter = loadavg()[0].toFixed(1);
  c.closeSync();
  instance.closeSync();
  rmSync(dir, { recursive: true, force: true });
  const reference = median(times.get(statements[0][0])!);
  const rows = statements.map(([label]) => {
    const m = median(times.get(label)!);
    return `| ${label} | ${m} | ${(m / reference).toFixed(2)} | ${times.get(label)!.join(' / ')} |`;
  });
  writeSection('warehouse-definitions', `## Warehouse statements of metric library definitions: 1,000,000 units, 3,000,000 events (issue 32)

\`npx tsx bench/warehouse-definitions.ts\` (ROUNDS=${ROUNDS}), ${machine()}, 1-minute load ${loadBefore} → ${loadAfter}.
One statement each, the module's generated SQL on an embedded DuckDB file (read through the same node API the DuckDB
driver uses), rounds alternating the statements; the ratio is each median over the reference's median (the inline
mean metric capped at 500, one statement of every analysis today). The machine is shared, so the ratios are the figures
to read.

| Statement | median ms | ratio | all rounds ms |
|---|---|---|---|
${rows.join('\n')}`);
}

await main();
