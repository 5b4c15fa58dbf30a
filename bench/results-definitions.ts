/**
 * Definition metrics benchmark (issue 32): the first computation of GET /results/{id} (no rollup, no cache) of an
 * experiment with the reference's two inline metrics, against the same computation with one ratio and one p90 metric of
 * the metric library added, on the same data. Two experiments hold identical assignments and events (the second a copy
 * of the first under its own id); their GETs alternate, in turn order swapped every round.
 * Each GET's time and its CPU time (the service's process and its PostgreSQL backends, from /proc: Linux, the database
 * on this machine), which a shared machine disturbs far less.
 * Run: npm run build && BENCH_SCALE=0.1 npx tsx bench/results-definitions.ts   (target: with / without <= 1.5)
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import os from 'node:os';
import pg from 'pg';
import { api, BENCH_DATABASE_URL, cpuSeconds, machine, signIn, startServer } from './lib.js';
import { loadResultsData } from './results-data.js';

const SCALE = Number(process.env.BENCH_SCALE ?? 1);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const USERS = Math.round(1_000_000 * SCALE);
const DAYS = 14;

const server = await startServer({ RESULTS_READ_TIMEOUT_MS: '600000' });
const client = new pg.Client({ connectionString: BENCH_DATABASE_URL });
await client.connect();

/** CPU seconds of a process (Linux /proc; 0 once it is gone). */
const cpuOf = (pid: number) => { try { return cpuSeconds(pid); } catch { return 0; } };
/**
 * CPU seconds used so far by the service and by each of its PostgreSQL backends (the server processes whose client
 * ports are the service's sockets to PostgreSQL): on a shared machine the CPU a GET costs moves far less than its time.
 */
async function serviceCpu(): Promise<{ service: number; backends: Map<number, number> }> {
  const service = cpuOf(server.pid);
  const inodes = new Set(readdirSync(`/proc/${server.pid}/fd`).flatMap((fd) => {
    try { return [/^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${server.pid}/fd/${fd}`))?.[1] ?? '']; } catch { return []; }
  }));
  const ports = ['/proc/net/tcp', '/proc/net/tcp6'].flatMap((f) => readFileSync(f, 'utf8').split('\n').slice(1).flatMap((line) => {
    const cols = line.trim().split(/\s+/);
    return cols.length > 9 && inodes.has(cols[9]) ? [parseInt(cols[1].split(':')[1], 16)] : [];
  }));
  const { rows } = await client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE client_port = ANY($1::int[])', [ports]);
  return { service, backends: new Map(rows.map((r) => [r.pid, cpuOf(r.pid)])) };
}
const cpuBetween = (a: Awaited<ReturnType<typeof serviceCpu>>, b: Awaited<ReturnType<typeof serviceCpu>>) =>
  (b.service - a.service) + [...b.backends].reduce((sum, [pid, cpu]) => sum + cpu - (a.backends.get(pid) ?? 0), 0);
type Experiment = { id: string; variants: Array<{ id: string }> };
/**
 * Two started experiments on identical data (loaded here), the second with a ratio and a p90 metric of the metric
 * library besides the reference's two inline metrics.
 */
async function setUp(bearer: Record<string, string>): Promise<{ without: Experiment; withDefs: Experiment }> {
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
  return { without, withDefs };
}

try {
  const { bearer } = await signIn(server.base);
  // BENCH_SCHEMA (bench/lib.ts): the data an earlier run loaded into that schema (at the same BENCH_SCALE) is reused.
  const kept = process.env.BENCH_SCHEMA;
  const { rows: earlier } = kept
    ? await client.query<{ id: string; key: string }>(`SELECT id, key FROM ${kept}.experiments WHERE key LIKE 'definitions-bench-%'`)
    : { rows: [] as Array<{ id: string; key: string }> };
  const experimentOf = (key: string) => api<Experiment>(server.base, 'GET', `/api/v1/experiments/${earlier.find((r) => r.key === key)!.id}`, undefined, bearer);
  const { without, withDefs } = earlier.length === 2
    ? { without: await experimentOf('definitions-bench-without'), withDefs: await experimentOf('definitions-bench-with') }
    : await setUp(bearer);
  if (earlier.length === 2) console.log(`reusing the data loaded in ${kept}`);

  // use_cache=false with the scheduler off: every GET is a first computation (no rollup; a GET never writes).
  const get = async (e: Experiment) => {
    const cpu = await serviceCpu();
    const start = performance.now();
    await api(server.base, 'GET', `/api/v1/results/${e.id}?use_cache=false`, undefined, bearer);
    const ms = performance.now() - start;
    const after = await serviceCpu();
    if (process.env.BENCH_SPLIT) console.log(e.id.slice(0, 4), 'service', (1000 * (after.service - cpu.service)).toFixed(0), 'all', (1000 * cpuBetween(cpu, after)).toFixed(0));
    return { ms, cpu: 1000 * cpuBetween(cpu, after) };
  };
  await get(without);
  await get(withDefs);
  const rows: string[] = [];
  const ratios: number[] = [];
  const cpuRatios: number[] = [];
  for (let round = 1; round <= ROUNDS; round += 1) {
    const load = os.loadavg()[0].toFixed(1);
    let a: { ms: number; cpu: number };
    let b: { ms: number; cpu: number };
    if (round % 2 === 1) {
      a = await get(without);
      b = await get(withDefs);
    } else {
      b = await get(withDefs);
      a = await get(without);
    }
    ratios.push(b.ms / a.ms);
    cpuRatios.push(b.cpu / a.cpu);
    rows.push(`| ${round} | ${round % 2 === 1 ? 'without first' : 'with first'} | ${a.ms.toFixed(0)} | ${b.ms.toFixed(0)} | **${(b.ms / a.ms).toFixed(2)}** | ${a.cpu.toFixed(0)} | ${b.cpu.toFixed(0)} | **${(b.cpu / a.cpu).toFixed(2)}** | ${load} |`);
    console.log(rows[rows.length - 1]);
  }
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  console.log(`\nMachine: ${machine()}; ${USERS} users, ${3 * USERS} events per experiment; median ratio ${median(ratios).toFixed(2)} (time), ${median(cpuRatios).toFixed(2)} (CPU)`);
  console.log('| round | order | without (ms) | with ratio + p90 (ms) | with / without | CPU without (ms) | CPU with (ms) | CPU with / without | load (1 min) |\n|---|---|---|---|---|---|---|---|---|');
  console.log(rows.join('\n'));
} finally {
  await client.end();
  await server.stop();
}
