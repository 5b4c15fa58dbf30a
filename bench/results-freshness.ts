/**
 * Results freshness (issue 31): time from a committed batch of 10,000 events to a results read (cache on) that
 * includes them, under steady ingestion at BENCH_RATE events/s (default 50,000) from BENCH_SENDERS concurrent senders.
 * A read includes the batch when its data_through (the commit time of the newest data in it) is at or after the
 * moment the batch's last request was answered (client and server share this machine's clock). Reference, in the
 * same run and alternating with the measured rounds: a results read computed afresh (use_cache=false).
 * Run: npm run build && BENCH_RESULTS=freshness npx tsx bench/results.ts
 */
import { loadavg } from 'node:os';
import { api, machine, signIn, startServer, writeSection } from './lib.js';

const RATE = Number(process.env.BENCH_RATE ?? 50_000);
const SENDERS = Number(process.env.BENCH_SENDERS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const USERS = 20_000;
const BATCH = 10_000;
const REQUEST = 1_000;

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

export async function runFreshness(): Promise<void> {
  // As deployed: the background jobs on (the results-rollup job, event-ranges) and the rollup following the commits.
  const server = await startServer({ RESULTS_READ_TIMEOUT_MS: '600000', SCHEDULER_ENABLED: 'true', RESULTS_COMMIT_ROLLUP_MS: '1000' });
  try {
    const uptimeBefore = loadavg().map((x) => x.toFixed(1)).join(' ');
    const { bearer, key } = await signIn(server.base);
    const e = await api<{ id: string; key: string }>(server.base, 'POST', '/api/v1/experiments/', {
      name: 'Freshness bench', key: 'freshness-bench', experiment_type: 'a_b',
      variants: [{ name: 'control', is_control: true, traffic_allocation: 50 }, { name: 'b', traffic_allocation: 50 }],
      metrics: [{ name: 'Purchase', event_name: 'purchase', is_primary: true }, { name: 'Clicks', event_name: 'click', metric_type: 'count' }],
    }, bearer);
    await api(server.base, 'POST', `/api/v1/experiments/${e.id}/start`, undefined, bearer);
    for (let i = 0; i < USERS; i += REQUEST) {
      await api(server.base, 'POST', '/api/v1/tracking/assign/batch', {
        experiment_key: e.key, users: Array.from({ length: REQUEST }, (_, j) => ({ user_id: `u${i + j}` })),
      }, key);
    }
    const body = (name: string, offset: number) => JSON.stringify({
      events: Array.from({ length: REQUEST }, (_, j) => ({ event_type: name, user_id: `u${(offset + j * 7) % USERS}`, experiment_key: e.key })),
    });
    // A request whose connection failed (refused or reset at connect on this loaded machine) is sent again, counted.
    let connectFailures = 0;
    const track = async (payload: string): Promise<void> => {
      let res: Response;
      try {
        res = await fetch(`${server.base}/api/v1/tracking/batch`, { method: 'POST', headers: { 'content-type': 'application/json', ...key }, body: payload });
      } catch (error) {
        if (++connectFailures > 100) throw error;
        return track(payload);
      }
      if (res.status !== 200) throw new Error(`track: ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
    };
    const read = async (query = '') => api<{ data_through: string | null }>(server.base, 'GET', `/api/v1/results/${e.id}${query}`, undefined, bearer);

    // Steady background ingestion: each sender paces itself to RATE / SENDERS events a second.
    let running = true;
    let sent = 0;
    const perSenderMs = (REQUEST * SENDERS * 1000) / RATE;
    const senders = Array.from({ length: SENDERS }, async (_, s) => {
      const payloads = Array.from({ length: 8 }, (_, k) => body('click', s * 997 + k * 131));
      for (let k = 0; running; k++) {
        const due = performance.now() + perSenderMs;
        await track(payloads[k % payloads.length]);
        sent += REQUEST;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      }
    });
    const started = performance.now();
    const latencies: number[] = [];
    const references: number[] = [];
    // The 1-minute load average as each round starts (the machine is shared).
    const loads: string[] = [];
    // A sender's failure ends the run (its error is the one shown); so does a read's, after the senders stopped.
    const sending = Promise.all(senders);
    sending.catch(() => { running = false; });
    try {
      await read();
      for (let round = 0; round < ROUNDS && running; round++) {
        loads.push(loadavg()[0].toFixed(1));
        // Reference (alternating): a read computed afresh.
        const r0 = performance.now();
        await read('?use_cache=false');
        references.push(performance.now() - r0);
        // Measured: 10,000 events in 10 concurrent requests; then reads until one includes them.
        await Promise.all(Array.from({ length: BATCH / REQUEST }, (_, k) => track(body('purchase', round * 1_009 + k * 101))));
        const committed = Date.now();
        const t0 = performance.now();
        for (;;) {
          const r = await read();
          if (r.data_through !== null && Date.parse(r.data_through) >= committed) break;
        }
        latencies.push(performance.now() - t0);
      }
    } finally {
      running = false;
    }
    await sending;
    const seconds = (performance.now() - started) / 1000;
    const achieved = Math.round(sent / seconds);
    const uptimeAfter = loadavg().map((x) => x.toFixed(1)).join(' ');
    const ms = (x: number) => `${x.toFixed(0)} ms`;
    const lines = [
      '## Results freshness (issue 31)',
      '',
      `Machine: ${machine()}; load average (1, 5, 15 min) ${uptimeBefore} before, ${uptimeAfter} after (machine shared with other work).`,
      `Command: \`npm run build && BENCH_RESULTS=freshness BENCH_ROUNDS=${ROUNDS} npx tsx bench/results.ts\` (PostgreSQL at BENCH_DATABASE_URL, one API process with its background jobs on and RESULTS_COMMIT_ROLLUP_MS=1000).`,
      '',
      `Steady ingestion asked: ${RATE.toLocaleString('en')} events/s from ${SENDERS} senders; reached: ${achieved.toLocaleString('en')} events/s over ${seconds.toFixed(0)} s (requests sent again after a failed connection: ${connectFailures}).`,
      '',
      '| measure | rounds | p50 | p99 | max |',
      '|---|---|---|---|---|',
      `| committed batch of 10,000 events -> results read (cache on) including them | ${latencies.length} | ${ms(percentile(latencies, 0.5))} | ${ms(percentile(latencies, 0.99))} | ${ms(Math.max(...latencies))} |`,
      `| reference: results read computed afresh (use_cache=false), alternating | ${references.length} | ${ms(percentile(references, 0.5))} | ${ms(percentile(references, 0.99))} | ${ms(Math.max(...references))} |`,
      '',
      `Ratio p99 / reference p50: ${(percentile(latencies, 0.99) / percentile(references, 0.5)).toFixed(2)}x. Target: p99 <= 5 s (RESULTS_MAX_STALENESS_SECONDS).`,
      '',
      `Per round (ms, in order): ${latencies.map((x) => x.toFixed(0)).join(', ')}; reference ${references.map((x) => x.toFixed(0)).join(', ')}.`,
      `1-minute load average as each round started: ${loads.join(', ')}.`,
    ];
    // BENCH_SECTION: the docs/benchmarks.md markers written (default results-freshness).
    writeSection(process.env.BENCH_SECTION ?? 'results-freshness', lines.join('\n'));
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await server.stop();
  }
}
