/**
 * Definition metrics benchmark (issue 32): the first computation of GET /results/{id} (no rollup, no cache) of an
 * experiment with the reference's two inline metrics, against the same computation with one ratio and one p90 metric of
 * the metric library added, on the same data. Two experiments hold identical assignments and events (the second a copy
 * of the first under its own id); their GETs alternate, in turn order swapped every round.
 * Run: npm run build && BENCH_SCALE=0.1 npx tsx bench/results-definitions.ts   (target: with / without <= 1.5)
 */
import os from 'node:os';
import pg from 'pg';
import { api, BENCH_DATABASE_URL, machine, signIn, startServer } from './lib.js';
import { loadResultsData } from './results-data.js';

const SCALE = Number(process.env.BENCH_SCALE ?? 1);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const USERS = Math.round(1_000_000 * SCALE);
const DAYS = 14;

const server = await startServer({ RESULTS_READ_TIMEOUT_MS: '600000' });
const client = new pg.Client({ connectionString: BENCH_DATABASE_URL });
await client.connect();
type Experiment = { id: string; variants: Array<{ id: string }> };
try {
  const { bearer } = await signIn(server.base);
  const define = (body: Record<string, unknown>) => api<{ id: string }>(server.base, 'POST', '/api/v1/metric-definitions', body, bearer);
  const ratio = await define({
    name: 'Revenue per purchase', kind: 'ratio',
    numerator: { event_name: 'revenue', aggregate: 'sum' }, denominator: { event_name: 'purchase', aggregate: 'count' },
  });
  const p90 = await define({ name: 'p90 revenue', kind: 'quantile', event_name: 'revenue', aggregate: 'sum', quantile: 0.9 });
  const inline = [
    { name: 'Purchase', event_name: 'purchase', metric_type: 'conversion', is_primary: true },
    { name: 'Revenue', event_name: 'revenue', metric_type: 'revenue' },
  ];
  const create = async (key: string, metrics: Array<Record<string, unknown>>) => {
    const e = await api<Experiment>(server.base, 'POST', '/api/v1/experiments/', {
      name: key, key, experiment_type: 'mv', metrics,
      variants: [{ name: 'control', is_control: true, traffic_allocation: 34 }, { name: 'b', traffic_allocation: 33 }, { name: 'c', traffic_allocation: 33 }],
    }, bearer);
    await api(server.base, 'POST', `/api/v1/experiments/${e.id}/start`, undefined, bearer);
    return e;
  };
  const without = await create('definitions-bench-without', inline);
  const withDefs = await create('definitions-bench-with', [
    ...inline,
    { name: 'Revenue per purchase', event_name: 'revenue', metric_definition_id: ratio.id },
    { name: 'p90 revenue', event_name: 'revenue', metric_definition_id: p90.id },
  ]);
  const { rows: schemas } = await client.query<{ nspname: string }>(`SELECT nspname FROM pg_namespace WHERE nspname LIKE 'bench\\_%'`);
  let schema = '';
  for (const { nspname } of schemas) {
    const found = await client.query(`SELECT 1 FROM ${nspname}.experiments WHERE id = $1`, [without.id]).catch(() => ({ rowCount: 0 }));
    if (found.rowCount) schema = nspname;
  }
  await client.query(`SET search_path TO ${schema}`);
  const loadStart = performance.now();
  for (const e of [without, withDefs]) {
    await loadResultsData(client, e.id, e.variants.map((v) => v.id), { users: USERS, days: DAYS, purchaseEnd: Math.round(2.4 * USERS), countryContext: false });
  }
  await client.query('VACUUM ANALYZE assignments');
  await client.query('VACUUM ANALYZE events');
  console.log(`loaded 2 x ${USERS} users, 2 x ${3 * USERS} events in ${((performance.now() - loadStart) / 1000).toFixed(1)} s`);

  // use_cache=false with the scheduler off: every GET is a first computation (no rollup; a GET never writes).
  const get = async (e: Experiment) => {
    const start = performance.now();
    await api(server.base, 'GET', `/api/v1/results/${e.id}?use_cache=false`, undefined, bearer);
    return performance.now() - start;
  };
  await get(without);
  await get(withDefs);
  const rows: string[] = [];
  const ratios: number[] = [];
  for (let round = 1; round <= ROUNDS; round += 1) {
    const load = os.loadavg()[0].toFixed(1);
    let a: number;
    let b: number;
    if (round % 2 === 1) {
      a = await get(without);
      b = await get(withDefs);
    } else {
      b = await get(withDefs);
      a = await get(without);
    }
    ratios.push(b / a);
    rows.push(`| ${round} | ${round % 2 === 1 ? 'without first' : 'with first'} | ${a.toFixed(0)} | ${b.toFixed(0)} | **${(b / a).toFixed(2)}** | ${load} |`);
    console.log(rows[rows.length - 1]);
  }
  const median = [...ratios].sort((x, y) => x - y)[Math.floor(ratios.length / 2)];
  console.log(`\nMachine: ${machine()}; ${USERS} users, ${3 * USERS} events per experiment; median ratio ${median.toFixed(2)}`);
  console.log('| round | order | without (ms) | with ratio + p90 (ms) | with / without | load (1 min) |\n|---|---|---|---|---|---|');
  console.log(rows.join('\n'));
} finally {
  await client.end();
  await server.stop();
}
