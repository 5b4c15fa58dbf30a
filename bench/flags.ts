/**
 * Feature flag evaluation benchmark (issue 4): GET /api/v1/feature-flags/user/{user_id} with 50 active flags of 3
 * conditions each, against a bare Fastify route answering JSON of the same size, each server in its own process.
 * The service is the built one (bench/lib.ts startServer) on real Postgres in its own schema, rate limits and
 * scheduler off. The machine is shared, so the two routes are measured in alternating rounds (ROUNDS, default 5) and
 * the medians are reported; the 1-minute load average is recorded around the rounds.
 * Each round also measures OFREP (issue 28) on the same flags and contexts: bulk evaluation
 * (POST /ofrep/v1/evaluate/flags, every flag, target >= 80% of the user route's req/s in the same round) and single
 * evaluation (POST /ofrep/v1/evaluate/flags/{key}), written to the `ofrep` section.
 * Run: npm run build && npx tsx bench/flags.ts   (targets: >= 50% of the bare route's req/s, p99 < 10 ms at 50 connections)
 *
 * `npx tsx bench/flags.ts environments` (issue 29) measures instead the same route on two servers side by side: one
 * with the default environment only, one with 5 environments of the same 50 flags (the key in the last one), in
 * alternating rounds; target: the 5-environment server within 5 % of the 1-environment one.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { loadavg } from 'node:os';
import { api, cpuSeconds, machine, measure, signIn, startServer, table, waitForHealth, writeSection, type Measured } from './lib.js';

const FLAGS = 50;
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const ROUND_SECONDS = 8;
const ATTRIBUTES = { country: 'US', plan: 'pro', app_version: '2.4.1', user: { age: 31 } };
const CONTEXT = encodeURIComponent(JSON.stringify(ATTRIBUTES));

/** A bare Fastify route returning a fixed JSON object: the ceiling for a route of this response size. */
async function startBare(body: string, port: number): Promise<ChildProcess> {
  const code = `
    import Fastify from 'fastify';
    const app = Fastify({ logger: false });
    const body = JSON.parse(process.env.BODY);
    app.get('/bare/:user_id', async () => body);
    app.get('/health', async () => ({ ok: true }));
    await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) });
    process.on('SIGTERM', () => app.close().then(() => process.exit(0)));`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], { env: { ...process.env, BODY: body, PORT: String(port) }, stdio: 'inherit' });
  await waitForHealth(`http://127.0.0.1:${port}`);
  return child;
}

function stop(child: ChildProcess): Promise<unknown> {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  return exited;
}

const load = () => loadavg()[0].toFixed(1);

/** Three conditions per flag, on the operators SDK users reach for most: list, version and equality. */
function flagBody(i: number) {
  return {
    key: `bench-flag-${i}`, name: `Bench flag ${i}`, is_active: true, rollout_percentage: 50,
    targeting_rules: {
      logical_operator: 'AND',
      groups: [{
        logical_operator: 'AND',
        conditions: [
          { attribute: 'country', operator: 'in', value: ['US', 'CA', 'GB', `X${i}`] },
          { attribute: 'app_version', operator: 'semver_gte', value: `${1 + (i % 3)}.0.0` },
          { attribute: i % 2 ? 'plan' : 'user.age', operator: i % 2 ? 'equals' : 'gte', value: i % 2 ? 'pro' : 18 },
        ],
      }],
    },
  };
}

if (process.argv[2] === 'environments') await environmentsBench();
else await mainBench();

async function mainBench(): Promise<void> {
const server = await startServer();
let bareServer: ChildProcess | undefined;
try {
  const base = server.base;
  const { bearer, key } = await signIn(base);
  let n = 0;
  const userPath = () => `/api/v1/feature-flags/user/user-${n++ % 100_000}?context=${CONTEXT}`;
  const flagRoute = { url: base, headers: key, requests: [{ setupRequest: (req: object) => ({ ...req, path: userPath() }) }] };
  await measure('warm-up', { ...flagRoute, duration: 3 });
  // The same route before any flag exists: what routing, API-key auth, context checks and serialisation cost alone.
  const empty = await measure('same route, no flags yet', flagRoute);
  for (let i = 0; i < FLAGS; i++) await api(base, 'POST', '/api/v1/feature-flags/', flagBody(i), bearer);
  const sample = await fetch(`${base}/api/v1/feature-flags/user/sample?context=${CONTEXT}`, { headers: key }).then((r) => r.text());
  if (Object.keys(JSON.parse(sample)).length !== FLAGS) throw new Error(`unexpected answer: ${sample}`);
  const barePort = Number(new URL(base).port) + 1;
  bareServer = await startBare(sample, barePort);

  const bareRoute = {
    url: `http://127.0.0.1:${barePort}`, requests: [{ setupRequest: (req: object) => ({ ...req, path: `/bare/user-${n++ % 100_000}` }) }],
  };
  // OFREP: the same user ids and attributes, as the evaluation context of a POST body.
  const ofrepBody = () => JSON.stringify({ context: { targetingKey: `user-${n++ % 100_000}`, ...ATTRIBUTES } });
  const ofrepHeaders = { ...key, 'content-type': 'application/json' };
  const bulkRoute = { url: base, headers: ofrepHeaders, requests: [{ method: 'POST' as const, setupRequest: (req: object) => ({ ...req, path: '/ofrep/v1/evaluate/flags', body: ofrepBody() }) }] };
  const singleRoute = {
    url: base, headers: ofrepHeaders,
    requests: [{ method: 'POST' as const, setupRequest: (req: object) => ({ ...req, path: `/ofrep/v1/evaluate/flags/bench-flag-${n % FLAGS}`, body: ofrepBody() }) }],
  };
  const bulkSample = JSON.parse(await fetch(`${base}/ofrep/v1/evaluate/flags`, { method: 'POST', headers: ofrepHeaders, body: ofrepBody() }).then((r) => r.text()));
  if (bulkSample.flags.length !== FLAGS || bulkSample.flags.some((f: { value?: unknown }) => typeof f.value !== 'boolean')) throw new Error('unexpected OFREP answer');
  await measure('warm-up', { ...flagRoute, duration: 3 });
  await measure('warm-up', { ...bareRoute, duration: 3 });
  await measure('warm-up', { ...bulkRoute, duration: 3 });
  await measure('warm-up', { ...singleRoute, duration: 3 });
  // Alternating rounds: the machine is shared, so each round's two numbers are taken a few seconds apart and the
  // share is the median of the rounds' shares.
  const loadBefore = load();
  const rounds: Array<{ flags: Measured; bare: Measured; share: number }> = [];
  const ofrepRounds: Array<{ bulk: Measured; single: Measured; share: number; cpuShare: number }> = [];
  const onService = (label: string, options: Parameters<typeof measure>[1]) => measureOn(server.pid, label, options);
  for (let r = 1; r <= ROUNDS; r++) {
    // OFREP bulk right before the user route, the user route right before the bare one: each share compares
    // neighbours.
    const bulk = await onService(`round ${r}: OFREP bulk, POST /ofrep/v1/evaluate/flags`, { ...bulkRoute, duration: ROUND_SECONDS });
    const flags = await onService(`round ${r}: GET /feature-flags/user/{id}, ${FLAGS} flags x 3 conditions`, { ...flagRoute, duration: ROUND_SECONDS });
    const bare = await measure(`round ${r}: bare Fastify route, same JSON`, { ...bareRoute, duration: ROUND_SECONDS }, 0);
    const single = await onService(`round ${r}: OFREP single, POST /ofrep/v1/evaluate/flags/{key}`, { ...singleRoute, duration: ROUND_SECONDS });
    const share = flags.requestsPerSecond / bare.requestsPerSecond;
    flags.label += ` (${Math.round(share * 100)}% of the bare route)`;
    rounds.push({ flags, bare, share });
    const ofrepShare = bulk.requestsPerSecond / flags.requestsPerSecond;
    bulk.label += ` (${Math.round(ofrepShare * 100)}% of the user route)`;
    ofrepRounds.push({ bulk, single, share: ofrepShare, cpuShare: flags.cpuUsPerRequest! / bulk.cpuUsPerRequest! });
  }
  const loadAfter = load();
  const median = [...rounds].sort((x, y) => x.share - y.share)[Math.floor(ROUNDS / 2)];
  const share = Math.round(median.share * 100);
  const p99s = rounds.map((r) => r.flags.p99);
  const p99 = [...p99s].sort((x, y) => x - y)[Math.floor(ROUNDS / 2)];
  const rows = [...rounds.flatMap((r) => [r.flags, r.bare]), empty];
  console.table(rows);
  console.log(`share of bare throughput per round: ${rounds.map((r) => Math.round(r.share * 100)).join('%, ')}%; median ${share}% (target >= 50%); p99 per round ${p99s.join(', ')} ms, median ${p99} ms (target < 10 ms)`);
  writeSection('flags', `## Feature flags: GET /api/v1/feature-flags/user/{user_id} (issue 4)

Machine: ${machine()}; PostgreSQL on the same machine, which is shared with other work (numbers vary between runs);
1-minute load average ${loadBefore} before and ${loadAfter} after the flag route's measurement.
Each server runs in its own process (the built service, rate limits and scheduler off); autocannon
runs in a third with 50 connections, a different user id per request and a 4-attribute context. After a 3 s warm-up
of each, ${ROUNDS} rounds measure the flag route then the bare route for ${ROUND_SECONDS} s each; the share is the median of the
rounds' shares (the two numbers of a round are taken seconds apart on the shared machine). ${FLAGS} active flags, each with 3 conditions (\`in\`, \`semver_gte\`, \`equals\`/\`gte\`) and a 50% rollout.
The bare route is a Fastify route answering the same ${sample.length}-byte JSON object; "no flags yet" is the flag route
measured before the flags are created (routing, API-key auth, context checks, serialisation of an empty map).
Command: \`npm run build && npx tsx bench/flags.ts\`.

${table(rows)}

Flag route throughput: **${share}%** of the bare route, median of rounds at ${rounds.map((r) => Math.round(r.share * 100)).join('%, ')}%
(target at least 50%); p99 of the flag route **${p99} ms**, median of rounds at ${p99s.join(', ')} ms (target under 10 ms).
Evaluations read no database row: the compiled ruleset is held in memory and rebuilt after a flag or segment write.`);

  const ofrepMedian = Math.round([...ofrepRounds].sort((x, y) => x.share - y.share)[Math.floor(ROUNDS / 2)].share * 100);
  const cpuMedian = Math.round([...ofrepRounds].sort((x, y) => x.cpuShare - y.cpuShare)[Math.floor(ROUNDS / 2)].cpuShare * 100);
  const cpuShares = ofrepRounds.map((r) => `${Math.round(r.cpuShare * 100)}%`).join(', ');
  const ofrepRows = rounds.flatMap((r, i) => [r.flags, ofrepRounds[i].bulk, ofrepRounds[i].single]);
  console.table(ofrepRows);
  console.log(`OFREP bulk share of the user route per round: ${ofrepRounds.map((r) => Math.round(r.share * 100)).join('%, ')}%; median ${ofrepMedian}% (target >= 80%)`);
  console.log(`service CPU per request, user route / OFREP bulk, per round: ${cpuShares}; median ${cpuMedian}%`);
  writeSection('ofrep', `## OFREP: bulk and single evaluation beside GET /feature-flags/user/{id} (issue 28)

Machine: ${machine()}; measured in the same run and server as the feature-flags section (${FLAGS} flags, autocannon
with 50 connections, a different user id per request, the same 4 attributes); 1-minute load average ${loadBefore} before and
${loadAfter} after the rounds. OFREP requests send them as the POST body \`{"context": {"targetingKey": "user-N", ...}}\`. Each
of the ${ROUNDS} rounds measures OFREP bulk (every flag: value, variant, reason, metadata, the event stream entry and an ETag
mixed from digests of the answer's pieces, each computed once per ruleset snapshot), the user route, the bare route and OFREP single (one flag, with the satisfied rule in its
metadata) for ${ROUND_SECONDS} s each, in that order; the share is bulk over the user route of the same round (measured
back to back), median of rounds. Command: \`npm run build && npx tsx bench/flags.ts\`.

The service's CPU time per request (user + system, from /proc, over each measured run) is beside each route: it
moves much less with the machine's load than the throughput does, and the ratio of the user route's to OFREP bulk's
is the throughput share OFREP bulk would have where the service is CPU-bound.

${table(ofrepRows, (m) => (m.cpuUsPerRequest === undefined ? '' : `service CPU ${m.cpuUsPerRequest} us/request`))}

OFREP bulk throughput: **${ofrepMedian}%** of GET /feature-flags/user/{id}, median of rounds at ${ofrepRounds.map((r) => Math.round(r.share * 100)).join('%, ')}%
(target at least 80%). Service CPU per request, user route over OFREP bulk: **${cpuMedian}%**, median of rounds at ${cpuShares}.`);
} finally {
  if (bareServer) await stop(bareServer);
  await server.stop();
}
}

/** Issue 29: GET /feature-flags/user/{id} with 5 environments of 50 flags against 1 environment, alternating rounds. */
/** A measurement with the service's CPU per request beside its throughput: on a loaded machine the first moves much less. */
async function measureOn(pid: number, label: string, options: Parameters<typeof measure>[1]): Promise<Measured> {
  const before = cpuSeconds(pid);
  const m = await measure(label, options, 0);
  m.cpuUsPerRequest = Math.round(((cpuSeconds(pid) - before) * 1e6) / Math.max(1, m.requests));
  return m;
}

async function environmentsBench(): Promise<void> {
  const ENVIRONMENTS = 5;
  const one = await startServer();
  const five = await startServer();
  try {
    const prepare = async (base: string, environments: number) => {
      const { bearer } = await signIn(base);
      for (let i = 0; i < FLAGS; i++) await api(base, 'POST', '/api/v1/feature-flags/', flagBody(i), bearer);
      let environment = 'production';
      // Every other environment holds the same 50 flags, on, with the same rules (copied from production).
      for (let e = 1; e < environments; e++) {
        environment = `env-${e}`;
        await api(base, 'POST', '/api/v1/environments', { key: environment, name: environment, copy_from: 'production' }, bearer);
      }
      const created = await api<{ key: string }>(base, 'POST', '/api/v1/api-keys', { name: 'bench', environment }, bearer);
      const key = { 'x-api-key': created.key };
      const sample = await fetch(`${base}/api/v1/feature-flags/user/sample?context=${CONTEXT}`, { headers: key }).then((r) => r.text());
      if (Object.keys(JSON.parse(sample)).length !== FLAGS) throw new Error(`unexpected answer: ${sample}`);
      let n = 0;
      return { url: base, headers: key, requests: [{ setupRequest: (req: object) => ({ ...req, path: `/api/v1/feature-flags/user/user-${n++ % 100_000}?context=${CONTEXT}` }) }] };
    };
    const oneRoute = await prepare(one.base, 1);
    const fiveRoute = await prepare(five.base, ENVIRONMENTS);
    await measure('warm-up', { ...oneRoute, duration: 3 });
    await measure('warm-up', { ...fiveRoute, duration: 3 });
    const loadBefore = load();
    const rounds: Array<{ one: Measured; five: Measured; ratio: number; cpuRatio: number }> = [];
    for (let r = 1; r <= ROUNDS; r++) {
      // Alternating which goes first, so neither always measures right after the other.
      const first = r % 2 === 1 ? 'one' : 'five';
      const run = (which: 'one' | 'five') => measureOn(
        (which === 'one' ? one : five).pid,
        `round ${r}: ${which === 'one' ? '1 environment' : `${ENVIRONMENTS} environments`} x ${FLAGS} flags`,
        { ...(which === 'one' ? oneRoute : fiveRoute), duration: ROUND_SECONDS },
      );
      const a = await run(first);
      const b = await run(first === 'one' ? 'five' : 'one');
      const [m1, m5] = first === 'one' ? [a, b] : [b, a];
      const ratio = m5.requestsPerSecond / m1.requestsPerSecond;
      // CPU per request of the 5-environment server over the 1-environment one (above 100 %: costlier).
      const cpuRatio = m5.cpuUsPerRequest! / Math.max(1, m1.cpuUsPerRequest!);
      m5.label += ` (${Math.round(ratio * 1000) / 10}% of 1 environment)`;
      rounds.push({ one: m1, five: m5, ratio, cpuRatio });
    }
    const loadAfter = load();
    const median = [...rounds].sort((x, y) => x.ratio - y.ratio)[Math.floor(ROUNDS / 2)].ratio;
    const cpuMedian = [...rounds].sort((x, y) => x.cpuRatio - y.cpuRatio)[Math.floor(ROUNDS / 2)].cpuRatio;
    const rows = rounds.flatMap((r) => [r.one, r.five]);
    console.table(rows);
    const pct = (x: number) => `${Math.round(x * 1000) / 10}%`;
    const ratios = rounds.map((r) => pct(r.ratio)).join(', ');
    const cpuRatios = rounds.map((r) => pct(r.cpuRatio)).join(', ');
    console.log(`5 environments over 1 per round: ${ratios}; median ${pct(median)} (target within 5 %)`);
    console.log(`service CPU per request, 5 environments over 1, per round: ${cpuRatios}; median ${pct(cpuMedian)}`);
    writeSection('environments', `## Environments: GET /feature-flags/user/{id} with ${ENVIRONMENTS} environments of ${FLAGS} flags (issue 29)

Machine: ${machine()}; shared with other work; 1-minute load average ${loadBefore} before and ${loadAfter} after the
rounds. Two servers (the built service on PostgreSQL, each in its own schema and process): one with the default
environment only, one with ${ENVIRONMENTS} environments each holding the same ${FLAGS} flags (3 conditions, 50% rollout, on), the API
key in the last one. autocannon with 50 connections, a different user id per request, 4 attributes. ${ROUNDS} rounds of
${ROUND_SECONDS} s per server, the first server of a round alternating; the ratio is the ${ENVIRONMENTS}-environment server's req/s over the
1-environment server's in the same round, median of rounds. Command: \`npm run build && npx tsx bench/flags.ts environments\`.

${table(rows, (m) => `service CPU ${m.cpuUsPerRequest} us/request`)}

${ENVIRONMENTS} environments: **${pct(median)}** of 1 environment's throughput, median of rounds at ${ratios}
(target: within 5 %). The service's CPU time per request, which moves far less with the machine's load than
throughput does: ${ENVIRONMENTS} environments over 1, **${pct(cpuMedian)}**, median of rounds at ${cpuRatios}. Each environment's ruleset is compiled and cached on its own, so an evaluation reads one
environment's snapshot, as before.`);
  } finally {
    await one.stop();
    await five.stop();
  }
}
