/**
 * Results benchmark (issue 6): 1,000,000 assigned users and 3,000,000 events of a 3-variant experiment, loaded with
 * SQL into the server's schema, then GET /results/{id} timed cold (cache cleared, rollups current), on the very
 * first request (rollups built from nothing), and cached.
 * Run: npm run build && npx tsx bench/results.ts   (targets: cold under 2 s, cached under 20 ms)
 */
import pg from 'pg';
import { api, BENCH_DATABASE_URL, machine, signIn, startServer, writeSection } from './lib.js';

const USERS = 1_000_000;
const EVENTS = 3_000_000;
const DAYS = 14;

/** startServer keeps its schema to itself: find the bench schema that holds this experiment. */
async function schemaOf(client: pg.Client, experimentId: string): Promise<string> {
  const { rows } = await client.query<{ nspname: string }>(`SELECT nspname FROM pg_namespace WHERE nspname LIKE 'bench\\_%'`);
  for (const { nspname } of rows) {
    const found = await client.query(`SELECT 1 FROM ${nspname}.experiments WHERE id = $1`, [experimentId]).catch(() => ({ rowCount: 0 }));
    if (found.rowCount) return nspname;
  }
  throw new Error('bench schema not found');
}

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await fn();
  return { ms: performance.now() - start, value };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const fmt = (ms: number) => (ms >= 100 ? ms.toFixed(0) : ms.toFixed(1));

const server = await startServer();
const client = new pg.Client({ connectionString: BENCH_DATABASE_URL });
await client.connect();
try {
  const { bearer } = await signIn(server.base);
  const e = await api<{ id: string; variants: Array<{ id: string }> }>(server.base, 'POST', '/api/v1/experiments/', {
    name: 'Results bench', key: 'results-bench', experiment_type: 'mv',
    variants: [
      { name: 'control', is_control: true, traffic_allocation: 34 }, { name: 'b', traffic_allocation: 33 }, { name: 'c', traffic_allocation: 33 },
    ],
    metrics: [
      { name: 'Purchase', event_name: 'purchase', metric_type: 'conversion', is_primary: true },
      { name: 'Revenue', event_name: 'revenue', metric_type: 'revenue' },
    ],
  }, bearer);
  await api(server.base, 'POST', `/api/v1/experiments/${e.id}/start`, undefined, bearer);
  const schema = await schemaOf(client, e.id);
  await client.query(`SET search_path TO ${schema}`);
  const [v0, v1, v2] = e.variants.map((v) => v.id);

  // Assignments over the last 14 days, in time order (as the service appends them); user i gets variant i mod 3.
  const load = await timed(async () => {
    await client.query(`
      INSERT INTO assignments (id, experiment_id, variant_id, user_id, context, source, created_at)
      SELECT gen_random_uuid(), $1, (ARRAY[$2, $3, $4]::uuid[])[1 + i % 3], 'user-' || i,
             jsonb_build_object('country', (ARRAY['US', 'DE', 'FR', 'GB'])[1 + i % 4]), 'batch',
             now() - interval '${DAYS} days' + (i::float8 / ${USERS}) * interval '${DAYS - 1} days'
      FROM generate_series(0, ${USERS - 1}) i`, [e.id, v0, v1, v2]);
    // 3,000,000 events in time order, each within a day after its user's assignment: one view per user, 1.4M
    // purchases by 400,009 of the users (40%) and 0.6M revenue events, spread by multiplicative hashing.
    await client.query(`
      INSERT INTO events (id, event_name, user_id, experiment_id, variant_id, value, kind, created_at)
      SELECT gen_random_uuid(), name, 'user-' || u, $1, NULL, val, kind,
             now() - interval '${DAYS} days' + (u::float8 / ${USERS}) * interval '${DAYS - 1} days' + (1 + j % 23) * interval '1 hour' AS at
      FROM (
        SELECT j,
          CASE WHEN j < ${USERS} THEN j WHEN j < 2400000 THEN (j * 2654435761) % 400009 ELSE (j * 40503) % ${USERS} END AS u,
          CASE WHEN j < ${USERS} THEN '$view' WHEN j < 2400000 THEN 'purchase' ELSE 'revenue' END AS name,
          CASE WHEN j < ${USERS} THEN 'view' ELSE 'track' END AS kind,
          CASE WHEN j >= 2400000 THEN ((j * 7919) % 200)::float8 END AS val
        FROM generate_series(0::bigint, ${EVENTS - 1}) j
      ) s
      ORDER BY at`, [e.id]);
    // What autovacuum does soon after a bulk load: statistics, and the summaries of the new BRIN ranges.
    await client.query('VACUUM ANALYZE assignments');
    await client.query('VACUUM ANALYZE events');
  });
  const { rows: [{ n: events }] } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM events WHERE experiment_id = $1`, [e.id]);
  console.log(`loaded ${USERS} assignments and ${events} events in ${fmt(load.ms)} ms`);

  const url = `/api/v1/results/${e.id}`;
  const get = () => api<{ summary: { recommendation: string }; metrics: Array<{ variants: Array<{ sample_size: number; conversions: number }> }> }>(server.base, 'GET', url, undefined, bearer);
  const first = await timed(get);
  console.log(`first request (rollups built from nothing): ${fmt(first.ms)} ms`, first.value.metrics[0].variants);

  const cold: number[] = [];
  for (let i = 0; i < 5; i++) {
    await api(server.base, 'POST', `${url}/invalidate-cache`, undefined, bearer);
    cold.push((await timed(get)).ms);
  }
  const cached: number[] = [];
  for (let i = 0; i < 200; i++) cached.push((await timed(get)).ms);
  console.log({ cold, cachedMedian: median(cached), cachedP99: percentile(cached, 0.99) });

  writeSection('results', `## Results: GET /api/v1/results/{id} (issue 6)

Machine: ${machine()}; PostgreSQL 15 on the same machine, shared with other work (numbers vary between runs).
Data: one 3-variant experiment with two metrics (conversion and revenue), ${USERS.toLocaleString('en-US')} assigned users
over ${DAYS} days and ${Number(events).toLocaleString('en-US')} events (1,000,000 views, 1,400,000 purchases,
600,000 revenue events), loaded with SQL into the server's schema (${fmt(load.ms / 1000)} s), then VACUUM ANALYZE (as autovacuum would). Requests
are sequential, from one client. Command: \`npm run build && npx tsx bench/results.ts\`.

| Request | time |
|---|---|
| cold: cache cleared, rollups current (median of 5) | **${fmt(median(cold))} ms** (runs: ${cold.map(fmt).join(', ')}) |
| cached (200 requests) | **p50 ${fmt(median(cached))} ms**, p99 ${fmt(percentile(cached, 0.99))} ms |
| very first request: rollups built from nothing (3,000,000 events, once per experiment) | ${fmt(first.ms)} ms |

Targets: cold under 2 s, cached under 20 ms. A cold computation reads the rollups (per variant and day) plus the
events and assignments of the last minute, never the whole event table; the one-time build is what a new deployment
pays once per running experiment, after which the scheduler's \`results-rollup\` job keeps every running experiment's
rollups current each minute.`);
} finally {
  await client.end();
  await server.stop();
}
