/**
 * Guarded rollouts benchmark (issue 19): the cost of one guardrail check (tracking's guardrail read model) over
 * 1,000,000 events of 200,000 users spread over 14 days, for stage windows of an hour, a day and the 7-day cap,
 * beside a plain count of the same windows' events (the floor: one scan of the windows) measured in the same run.
 * Run: npx tsx bench/guardrails.ts
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { connectDatabase } from '../src/db/client.js';
import { migrate } from '../src/db/migrate.js';
import { guardrailCounts } from '../src/modules/tracking/arm-stats.js';
import { BENCH_DATABASE_URL, machine, writeSection } from './lib.js';

const EVENTS = 1_000_000;
const ROUNDS = 5;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

const schema = `bench_g${randomUUID().replace(/-/g, '').slice(0, 12)}`;
const admin = new pg.Client({ connectionString: BENCH_DATABASE_URL });
await admin.connect();
await admin.query(`CREATE SCHEMA ${schema}`);
const database = await connectDatabase({ databaseUrl: BENCH_DATABASE_URL, searchPath: `${schema},public`, poolSize: 4 });
const rows: string[] = [];
try {
  await migrate(database);
  const flagId = randomUUID();
  // Every tenth event is the guardrail event; in the second week 10% of the users get the flag on (tagged events).
  await database.exec(`
    INSERT INTO events (id, event_name, user_id, feature_flag_id, kind, created_at)
    SELECT gen_random_uuid(), CASE WHEN g % 10 = 0 THEN 'checkout_error' ELSE 'page_view' END, 'u' || (g % 200000),
      CASE WHEN g % 2 = 1 AND (g % 200000) < 20000 AND g > ${EVENTS / 2} THEN '${flagId}'::uuid END, 'track',
      timestamptz '2031-01-01T00:00:00Z' + (g::float8 / ${EVENTS}) * interval '14 days'
    FROM generate_series(1, ${EVENTS}) g`);
  await database.exec('ANALYZE events');
  const applied = new Date('2031-01-08T00:00:00Z');
  const now = new Date('2031-01-15T00:00:00Z');
  for (const [label, hours] of [['1 hour', 1], ['1 day', 24], ['7 days (the cap)', 168]] as const) {
    const length = hours * 3_600_000;
    const windows = {
      flagId, eventNames: ['checkout_error'],
      exposedFrom: new Date(now.getTime() - length), exposedTo: now, baselineFrom: new Date(applied.getTime() - length), baselineTo: applied,
    };
    const floor = () => database.session((exec) => exec(
      `SELECT (SELECT count(*) FROM events WHERE created_at >= $1 AND created_at < $2)
            + (SELECT count(*) FROM events WHERE created_at >= $3 AND created_at < $4)`,
      [windows.exposedFrom.toISOString(), now.toISOString(), windows.baselineFrom.toISOString(), applied.toISOString()],
    ));
    const check: number[] = [];
    const scan: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      check.push(await timed(() => guardrailCounts(database.db, windows)));
      scan.push(await timed(floor));
    }
    const c = median(check);
    const s = median(scan);
    rows.push(`| ${label} | ${c.toFixed(0)} | ${s.toFixed(0)} | ${(c / s).toFixed(1)}x |`);
    console.log(rows.at(-1));
  }
} finally {
  await database.close();
  await admin.query(`DROP SCHEMA ${schema} CASCADE`);
  await admin.end();
}

writeSection('guardrails', `## Guarded rollouts: one guardrail check (issue 19)

Machine: ${machine()}; PostgreSQL on the same machine, which is shared with other work (numbers vary between runs).
${EVENTS.toLocaleString('en')} tracked events of 200,000 users over 14 days; one guardrail event name. A check reads
tracking's guardrail read model for the stage window and an equally long baseline window before the stage (two
grouped statements). The floor is a plain count of the same windows' events, measured in the same rounds. Median
of ${ROUNDS} rounds. The scheduler runs one check per active guarded schedule per minute.
Command: \`npx tsx bench/guardrails.ts\`.

| Stage window | check ms | floor ms (count of the windows' events) | check / floor |
|---|---|---|---|
${rows.join('\n')}`);
