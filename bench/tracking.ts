/**
 * Tracking benchmark (issue 5): POST /tracking/assign for new and returning users, and events per second through
 * POST /tracking/batch with 100 events a request, against the built server on real Postgres.
 * Run: npm run build && npx tsx bench/tracking.ts   (targets: assign >= 3,000 req/s, p99 < 25 ms; >= 50,000 events/s)
 */
import { loadavg } from 'node:os';
import { api, machine, measure, signIn, startServer, table, writeSection } from './lib.js';

const server = await startServer();
try {
  const { bearer, key } = await signIn(server.base);
  const e = await api<{ id: string; key: string }>(server.base, 'POST', '/api/v1/experiments/', {
    name: 'Bench', key: 'bench-exp', experiment_type: 'a_b',
    variants: [{ name: 'control', is_control: true, traffic_allocation: 50 }, { name: 'treatment', traffic_allocation: 50 }],
    metrics: [{ name: 'Purchase', event_name: 'purchase', is_primary: true }],
  }, bearer);
  await api(server.base, 'POST', `/api/v1/experiments/${e.id}/start`, undefined, bearer);
  const headers = { 'content-type': 'application/json', ...key };

  let next = 0;
  const newUsers = await measure('assign, new users', {
    url: `${server.base}/api/v1/tracking/assign`, method: 'POST', headers,
    requests: [{ setupRequest: (req) => ({ ...req, body: JSON.stringify({ experiment_key: e.key, user_id: `new-${next++}` }) }) }],
  });
  let returning = 0;
  const returningUsers = await measure('assign, returning users', {
    url: `${server.base}/api/v1/tracking/assign`, method: 'POST', headers,
    requests: [{ setupRequest: (req) => ({ ...req, body: JSON.stringify({ experiment_key: e.key, user_id: `new-${returning++ % 5_000}` }) }) }],
  });
  const batchBody = JSON.stringify({
    events: Array.from({ length: 100 }, (_, i) => ({ event_type: 'purchase', user_id: `new-${i}`, experiment_key: e.key, value: i })),
  });
  const batch = await measure('track batch (100 events/request)', {
    url: `${server.base}/api/v1/tracking/batch`, method: 'POST', headers, body: batchBody,
  });
  const results = [newUsers, returningUsers, batch];
  console.table(results);
  writeSection('tracking', `## Tracking (issue 5)

Machine: ${machine()}; PostgreSQL 15 on the same machine; 1-minute load average ${loadavg()[0].toFixed(1)} before the run;
autocannon with 50 connections, 3 s warm-up then 10 s measured per scenario, sharing the 2 cores with the server. Command: \`npm run build && npx tsx bench/tracking.ts\`.

${table(results)}

Events per second through /tracking/batch: **${batch.requestsPerSecond * 100}** (target 50,000).
Targets for assign: 3,000 req/s with p99 under 25 ms.`);
} finally {
  await server.stop();
}
