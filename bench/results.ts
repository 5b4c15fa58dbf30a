/**
 * Results benchmark (issues 6 and 19): 1,000,000 assigned users and 3,000,000 events of a 3-variant experiment, loaded
 * with SQL into the server's schema. Measured in one run, on the same data:
 *   - the SQL floor: hand-written statements counting converters per variant and metric (median of 3);
 *   - the first computation: GET /results/{id} with no rollup (a read-only direct aggregate), and the results-rollup
 *     job's first build of the rollups (the job's own code, run in this process against the server's schema);
 *   - cold with rollups (cache cleared), cached, and the job's incremental refresh after 10,000 new events.
 * Run: npm run build && npx tsx bench/results.ts   (targets: first computation <= 2 s, cold < 50 ms, incremental < 20 ms)
 * BENCH_RESULTS=freshness: bench/results-freshness.ts instead (issue 31).
 */
import pg from 'pg';
import { defaultResultsParallelQueries } from '../src/config.js';
import { connectDatabase } from '../src/db/client.js';
import { createAuditLog } from '../src/platform/audit.js';
import type { Bus } from '../src/platform/bus.js';
import { memoryCache } from '../src/platform/cache.js';
import { fixedClock } from '../src/platform/clock.js';
import { QUIET_LAG_MS } from '../src/db/write-marks.js';
import { createExperimentsReadModel } from '../src/modules/experiments/read-model.js';
import { createResultsService } from '../src/modules/results/service.js';
import { summarizeEventRanges } from '../src/modules/tracking/partitions.js';
import { api, BENCH_DATABASE_URL, machine, signIn, startServer, writeSection } from './lib.js';
import { loadResultsData } from './results-data.js';

/** BENCH_SCALE (default 1) shrinks the data for a busy machine: 0.1 is 100,000 users and 300,000 events. */
const SCALE = Number(process.env.BENCH_SCALE ?? 1);
const USERS = Math.round(1_000_000 * SCALE);
const NEW_EVENTS = 10_000;
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
const ratio = (ms: number, floor: number) => `${(ms / floor).toFixed(2)}x`;

// BENCH_RESULTS=freshness measures only how soon a read includes new events under steady ingestion (issue 31).
if (process.env.BENCH_RESULTS === 'freshness') {
  await (await import('./results-freshness.js')).runFreshness();
  process.exit(0);
}

// A read may take as long as it needs here: the first GET is timed to the end rather than answered 202.
const server = await startServer({ RESULTS_READ_TIMEOUT_MS: '600000' });
const client = new pg.Client({ connectionString: BENCH_DATABASE_URL });
await client.connect();
try {
  const loadBefore = (await import('node:os')).loadavg()[0].toFixed(1);
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
    // purchaseEnd 2,400,000 whatever the scale: the data this bench has always loaded (at BENCH_SCALE < 1, no revenue).
    await loadResultsData(client, e.id, [v0, v1, v2], { users: USERS, days: DAYS, purchaseEnd: 2_400_000, countryContext: true });
    // What autovacuum does soon after a bulk load: statistics, and the summaries of the new BRIN ranges.
    await client.query('VACUUM ANALYZE assignments');
    await client.query('VACUUM ANALYZE events');
  });
  const { rows: [{ n: events }] } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM events WHERE experiment_id = $1`, [e.id]);
  console.log(`loaded ${USERS} assignments and ${events} events in ${fmt(load.ms)} ms`);

  const url = `/api/v1/results/${e.id}`;
  const get = () => api<{ summary: { recommendation: string }; metrics: Array<{ variants: Array<{ sample_size: number; conversions: number }> }> }>(server.base, 'GET', url, undefined, bearer);
  const invalidate = () => api(server.base, 'POST', `${url}/invalidate-cache`, undefined, bearer);

  // The floor: what a person would write by hand to count converters per variant of each metric, on the same data.
  const floorSql = `
    SELECT a.variant_id, e.event_name, count(DISTINCT e.user_id) AS converters, count(*) AS events, sum(e.value) AS value
    FROM events e JOIN assignments a ON a.experiment_id = $1 AND a.user_id = e.user_id AND e.created_at >= a.created_at
    WHERE e.experiment_id = $1 AND e.event_name IN ('purchase', 'revenue') AND e.kind = 'track'
    GROUP BY 1, 2`;
  const floorRuns: number[] = [];
  const floor = async () => floorRuns.push((await timed(() => client.query(floorSql, [e.id]))).ms);
  await client.query(`SET jit = off; SET work_mem = '256MB'`);
  await floor();

  const first = await timed(get);
  console.log(`first request, no rollup (direct aggregate): ${fmt(first.ms)} ms`, first.value.metrics[0].variants);
  await floor();

  // The results-rollup job, as the scheduler runs it, against the server's schema; its clock is the rollup's quiet lag
  // ahead (nothing else writes), so that its window ends now and covers everything loaded.
  const database = await connectDatabase({ databaseUrl: BENCH_DATABASE_URL, searchPath: schema, poolSize: 8 });
  const clock = fixedClock(new Date(Date.now() + QUIET_LAG_MS));
  const experiment = await createExperimentsReadModel({ db: database.db, exclusionGroups: { activeGroupOf: async () => null } }).experiment(e.id);
  if (!experiment) throw new Error('the benchmark experiment is missing');
  const bus: Bus = { publish: async () => undefined, subscribe: () => () => undefined, close: async () => undefined };
  const job = createResultsService({
    db: database.db, clock, bus, cache: memoryCache(), cacheEnabled: false, audit: createAuditLog({ clock }), readTimeoutMs: 600_000, parallel: defaultResultsParallelQueries(),
    experiments: {
      experiment: async () => experiment, activePage: async () => [experiment], recordBayesianDecision: async () => undefined, pauseAutomatically: async () => false,
    },
  });
  const build = await timed(() => job.refresh(e.id));
  console.log(`rollup job, first build: ${fmt(build.ms)} ms`);
  const firstEvaluation = await timed(() => job.refreshActive());
  console.log(`rollup job, evaluation on the fresh rollups: ${fmt(firstEvaluation.ms)} ms`);
  await floor();

  const cold: number[] = [];
  for (let i = 0; i < 5; i++) {
    await invalidate();
    cold.push((await timed(get)).ms);
  }
  const cached: number[] = [];
  for (let i = 0; i < 200; i++) cached.push((await timed(get)).ms);

  // 10,000 new events (purchases and revenue of existing users), then the job's incremental refresh.
  await client.query(`
    INSERT INTO events (id, event_name, user_id, experiment_id, value, kind, created_at)
    SELECT gen_random_uuid(), CASE WHEN j % 2 = 0 THEN 'purchase' ELSE 'revenue' END, 'user-' || ((j * 7919) % ${USERS}), $1,
           CASE WHEN j % 2 = 1 THEN (j % 50)::float8 END, 'track', now()
    FROM generate_series(1, ${NEW_EVENTS}) j`, [e.id]);
  await invalidate();
  const coldTail = (await timed(get)).ms;
  const incremental: number[] = [];
  const evaluations: number[] = [];
  const incrementalFloor: number[] = [];
  const summaries: number[] = [];
  let rolledUpTo = new Date(clock.now().getTime() - QUIET_LAG_MS);
  for (let i = 0; i < 3; i++) {
    // Each round adds 10,000 more events (the first round's are in already): the refresh reads only those.
    if (i > 0) {
      await client.query(`
        INSERT INTO events (id, event_name, user_id, experiment_id, value, kind, created_at)
        SELECT gen_random_uuid(), CASE WHEN j % 2 = 0 THEN 'purchase' ELSE 'revenue' END, 'user-' || ((j * 104729 + ${i}) % ${USERS}), $1,
               CASE WHEN j % 2 = 1 THEN (j % 50)::float8 END, 'track', now()
        FROM generate_series(1, ${NEW_EVENTS}) j`, [e.id]);
    }
    // What the scheduler's event-ranges job does before the rollup: the new block ranges of the BRIN index summarized.
    summaries.push((await timed(() => summarizeEventRanges(database.db))).ms);
    // The new events read once before either measure (setting their hint bits, as the first of the results reads
    // of the tail would), so that the count and the refresh after it find them alike.
    await client.query(`SELECT count(*) FROM events WHERE experiment_id = $1 AND created_at > $2::timestamptz`, [e.id, rolledUpTo.toISOString()]);
    incrementalFloor.push((await timed(() => client.query(`
      SELECT a.variant_id, e.event_name, count(DISTINCT e.user_id) FROM events e JOIN assignments a ON a.experiment_id = $1 AND a.user_id = e.user_id
      WHERE e.experiment_id = $1 AND e.event_name IN ('purchase', 'revenue') AND e.kind = 'track' AND e.created_at > $2::timestamptz GROUP BY 1, 2`,
    [e.id, rolledUpTo.toISOString()]))).ms);
    // The job's clock exactly the quiet lag ahead, once the insert has committed: its window ends now, so it holds
    // the new events and the next round's come after it.
    clock.set(new Date(Date.now() + QUIET_LAG_MS));
    rolledUpTo = new Date(clock.now().getTime() - QUIET_LAG_MS);
    incremental.push((await timed(() => job.refresh(e.id))).ms);
    // What the job does next: the evaluation (a results computation on the fresh rollups; nothing left to roll up).
    evaluations.push((await timed(() => job.refreshActive())).ms);
  }
  // What one index probe per new user costs here: the 10,000 users of a round, each looked up in the assignments
  // (the refresh needs that probe and one of the user's earlier events per new user and metric).
  await client.query(`SET enable_hashjoin = off; SET enable_mergejoin = off`);
  const probes: number[] = [];
  for (let i = 0; i < 3; i++) {
    probes.push((await timed(() => client.query(`
      SELECT count(*) FROM generate_series(1, ${NEW_EVENTS}) j JOIN assignments a ON a.experiment_id = $1 AND a.user_id = 'user-' || ((j * 7919 + ${i}) % ${USERS})`,
    [e.id]))).ms);
  }
  await client.query(`RESET enable_hashjoin; RESET enable_mergejoin`);
  // Every counted event is rolled up: each incremental round had its 10,000 events to add.
  const { rows: [check] } = await client.query<{ rolled: string; stored: string }>(`
    SELECT (SELECT sum(event_count) FROM result_variant_days WHERE experiment_id = $1) AS rolled,
           (SELECT count(*) FROM events WHERE experiment_id = $1 AND event_name IN ('purchase', 'revenue') AND kind = 'track') AS stored`, [e.id]);
  if (check.rolled !== check.stored) throw new Error(`rolled up ${check.rolled} events of ${check.stored}`);
  await database.close();
  const floorMs = median(floorRuns);
  console.log({ floorRuns, cold, coldTail, cachedMedian: median(cached), cachedP99: percentile(cached, 0.99), incremental, evaluations, incrementalFloor, summaries, probes });

  writeSection('results', `## Results: GET /api/v1/results/{id} (issues 6 and 19)

Machine: ${machine()}; PostgreSQL 15 on the same machine, ${Number(loadBefore) < 1.5
    ? `otherwise quiet (load average ${loadBefore} before the run).`
    : `**shared with other work during the run (load average ${loadBefore} before it on 2 cores): absolute times are
higher than a quiet machine's; the ratios to the SQL floor, measured in the same run on the same data, are what to compare.**`}
Data: one 3-variant experiment with two metrics (conversion and revenue), ${USERS.toLocaleString('en-US')} assigned users
over ${DAYS} days and ${Number(events).toLocaleString('en-US')} events (1,000,000 views, 1,400,000 purchases,
600,000 revenue events), loaded with SQL into the server's schema (${fmt(load.ms / 1000)} s), then VACUUM ANALYZE (as autovacuum would).
Requests are sequential, from one client. Command: \`npm run build && npx tsx bench/results.ts\`.

| Measure | time | vs floor |
|---|---|---|
| SQL floor: one hand-written statement counting converters, events and value per variant of both metrics (median of ${floorRuns.length}) | **${fmt(floorMs)} ms** (runs: ${floorRuns.map(fmt).join(', ')}) | 1x |
| first computation, request side: GET with no rollup yet (read-only direct aggregate, both metrics) | **${fmt(first.ms)} ms** | ${ratio(first.ms, floorMs)} |
| first computation, job side: the results-rollup job builds the rollups from nothing (assignments and context values, exposures, each metric's ordered pass over ${4 * defaultResultsParallelQueries()} ranges of users; ${defaultResultsParallelQueries()} statements at a time, as RESULTS_PARALLEL_QUERIES defaults on this machine) | **${fmt(build.ms)} ms** | ${ratio(build.ms, floorMs)} |
| the job's evaluation on the fresh rollups (Bayesian decision, sequential SRM; a results computation) | ${fmt(firstEvaluation.ms)} ms | |
| cold: cache cleared, rollups current (median of 5) | **${fmt(median(cold))} ms** (runs: ${cold.map(fmt).join(', ')}) | |
| cold with ${NEW_EVENTS.toLocaleString('en-US')} events not rolled up yet (read from the events) | ${fmt(coldTail)} ms | |
| incremental refresh by the job after ${NEW_EVENTS.toLocaleString('en-US')} new events (median of ${incremental.length}) | **${fmt(median(incremental))} ms** (runs: ${incremental.map(fmt).join(', ')}) | ${ratio(median(incremental), median(incrementalFloor))} of a hand-written count of the new events (${fmt(median(incrementalFloor))} ms) |
| ${NEW_EVENTS.toLocaleString('en-US')} index probes of the assignments, one per user of a round (nested loop; median of ${probes.length}) | ${fmt(median(probes))} ms (runs: ${probes.map(fmt).join(', ')}) | |
| before each incremental refresh, the event-ranges job: the BRIN index's new block ranges summarized (median of ${summaries.length}) | ${fmt(median(summaries))} ms (runs: ${summaries.map(fmt).join(', ')}) | |
| the job's evaluation after each incremental refresh (median of ${evaluations.length}) | ${fmt(median(evaluations))} ms (runs: ${evaluations.map(fmt).join(', ')}) | |
| cached (200 requests) | **p50 ${fmt(median(cached))} ms**, p99 ${fmt(percentile(cached, 0.99))} ms | |

Targets (issue 19, for a quiet machine): first computation at most 2 s, cold with rollups under 50 ms, incremental
refresh after 10,000 new events under 20 ms. A GET never writes: with no rollup it computes from the events within
RESULTS_READ_TIMEOUT_MS (2 s by default; this run raises it to time the whole read) and otherwise answers 202 while
the rollups are built in the background; the scheduler's \`results-rollup\` job keeps every running experiment's
rollups current each minute. In each incremental round the new events are read once before the hand-written count
and the refresh (the first read of new rows sets their hint bits; it would otherwise fall on whichever comes first),
after the \`event-ranges\` job has summarized their block ranges as it does before each rollup.`);
} finally {
  await client.end();
  await server.stop();
}
