import pg from 'pg';
import { api, BENCH_DATABASE_URL, signIn, startServer } from './lib.js';
import { loadResultsData } from './results-data.js';
const USERS = Math.round(1_000_000 * Number(process.env.BENCH_SCALE ?? 0.1));
const server = await startServer({ RESULTS_READ_TIMEOUT_MS: '600000' });
const client = new pg.Client({ connectionString: BENCH_DATABASE_URL });
await client.connect();
const { bearer } = await signIn(server.base);
const define = (body: Record<string, unknown>) => api<{ id: string }>(server.base, 'POST', '/api/v1/metric-definitions', body, bearer);
const ratio = await define({ name: 'Revenue per purchase', kind: 'ratio', numerator: { event_name: 'revenue', aggregate: 'sum' }, denominator: { event_name: 'purchase', aggregate: 'count' } });
const p90 = await define({ name: 'p90 revenue', kind: 'quantile', event_name: 'revenue', aggregate: 'sum', quantile: 0.9 });
const e = await api<{ id: string; variants: Array<{ id: string }> }>(server.base, 'POST', '/api/v1/experiments/', {
  name: 'k', key: 'k', experiment_type: 'mv', metrics: [
    { name: 'Purchase', event_name: 'purchase', metric_type: 'conversion', is_primary: true },
    { name: 'Revenue', event_name: 'revenue', metric_type: 'revenue' },
    { name: 'Revenue per purchase', event_name: 'revenue', metric_definition_id: ratio.id },
    { name: 'p90 revenue', event_name: 'revenue', metric_definition_id: p90.id }],
  variants: [{ name: 'control', is_control: true, traffic_allocation: 34 }, { name: 'b', traffic_allocation: 33 }, { name: 'c', traffic_allocation: 33 }],
}, bearer);
await api(server.base, 'POST', `/api/v1/experiments/${e.id}/start`, undefined, bearer);
const { rows } = await client.query(`SELECT n.nspname FROM pg_namespace n WHERE nspname LIKE 'bench\\_%'`);
let schema = '';
for (const { nspname } of rows) if ((await client.query(`SELECT 1 FROM ${nspname}.experiments WHERE id = $1`, [e.id]).catch(() => ({ rowCount: 0 }))).rowCount) schema = nspname;
await client.query(`SET search_path TO ${schema}`);
await loadResultsData(client, e.id, e.variants.map((v) => v.id), { users: USERS, days: 14, purchaseEnd: Math.round(2.4 * USERS), countryContext: false });
await client.query('VACUUM ANALYZE assignments'); await client.query('VACUUM ANALYZE events');
console.log(JSON.stringify({ schema, id: e.id, variants: e.variants.map((v) => v.id), base: server.base, pid: server.pid, bearer }));
await client.end();
process.exit(0);
