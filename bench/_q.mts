import pg from 'pg';
import { readFileSync } from 'node:fs';
const c = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/test' });
await c.connect();
await c.query("set search_path to bench_4c04dbe882; set jit=off; set work_mem='256MB'; set enable_hashjoin=off; set enable_nestloop=off; set max_parallel_workers_per_gather=0");
const files = process.argv.slice(2);
for (let r = 0; r < 3; r++) for (const f of files) {
  const q = readFileSync(f, 'utf8');
  const t = performance.now();
  const res = await c.query(q);
  console.log(f, Array.isArray(res) ? res.length : res.rows.length, (performance.now() - t).toFixed(0));
}
await c.end();
