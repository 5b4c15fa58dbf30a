/** The results benchmarks' data, loaded with SQL into the server's schema (search_path set by the caller). */
import type pg from 'pg';

/**
 * Assignments over the last `days` days, in time order (as the service appends them), user i in variant i mod 3; then
 * 3 events per user in time order, each within a day after its user's assignment: one view per user, purchases by 40 %
 * of the users (event numbers users to purchaseEnd - 1) and revenue events after them, spread by multiplicative hashing.
 */
export async function loadResultsData(
  client: pg.Client, experimentId: string, variantIds: string[],
  { users, days, purchaseEnd, countryContext }: { users: number; days: number; purchaseEnd: number; countryContext: boolean },
): Promise<void> {
  await client.query(`
    INSERT INTO assignments (id, experiment_id, variant_id, user_id, context, source, created_at)
    SELECT gen_random_uuid(), $1, (ARRAY[$2, $3, $4]::uuid[])[1 + i % 3], 'user-' || i,
           ${countryContext ? `jsonb_build_object('country', (ARRAY['US', 'DE', 'FR', 'GB'])[1 + i % 4])` : 'NULL'}, 'batch',
           now() - interval '${days} days' + (i::float8 / ${users}) * interval '${days - 1} days'
    FROM generate_series(0, ${users - 1}) i`, [experimentId, ...variantIds]);
  await client.query(`
    INSERT INTO events (id, event_name, user_id, experiment_id, variant_id, value, kind, created_at)
    SELECT gen_random_uuid(), name, 'user-' || u, $1, NULL, val, kind,
           now() - interval '${days} days' + (u::float8 / ${users}) * interval '${days - 1} days' + (1 + j % 23) * interval '1 hour' AS at
    FROM (
      SELECT j,
        CASE WHEN j < ${users} THEN j WHEN j < ${Math.round(2.4 * users)} THEN (j * 2654435761) % ${users === 1_000_000 ? 400009 : Math.round(0.4 * users) + 1} ELSE (j * 40503) % ${users} END AS u,
        CASE WHEN j < ${users} THEN '$view' WHEN j < ${purchaseEnd} THEN 'purchase' ELSE 'revenue' END AS name,
        CASE WHEN j < ${users} THEN 'view' ELSE 'track' END AS kind,
        CASE WHEN j >= ${purchaseEnd} THEN ((j * 7919) % 200)::float8 END AS val
      FROM generate_series(0::bigint, ${3 * users - 1}) j
    ) s
    ORDER BY at`, [experimentId]);
}
