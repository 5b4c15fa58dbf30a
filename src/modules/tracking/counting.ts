/**
 * The counting rule, as SQL: named relations over assignments and events that the results store and tracking's read
 * model (for the bandit) embed in their aggregate statements, so no event ever travels to Node, no other module names
 * tracking's tables, and every per-arm number is counted one way (docs/adr/0004-analysis-core.md). Which events count:
 * a `track` event by an assigned user at or after the assignment, tagged with this experiment or untagged but carrying
 * a feature flag (events tagged with another experiment count for that one; events with neither key count in no
 * results, spec tracking rule 5). Who is left out: users with a conflicting exposure (`conflictingExposures`), whose
 * assignments stay in the sample-ratio check only. Each function documents the columns of the relation it returns.
 */
import { sql, type SQL } from 'drizzle-orm';

/** A half-open window (after, upTo] on created_at; null bounds are open. */
export interface CreatedWindow {
  after: Date | null;
  upTo: Date | null;
}

export const ALL_TIME: CreatedWindow = { after: null, upTo: null };

const windowOn = (column: SQL, w: CreatedWindow): SQL =>
  sql.join([
    w.after ? sql`${column} > ${w.after.toISOString()}::timestamptz` : sql`TRUE`,
    w.upTo ? sql`${column} <= ${w.upTo.toISOString()}::timestamptz` : sql`TRUE`,
  ], sql` AND `);

/** Events tagged with no experiment but with a feature flag: they count for every experiment their user is in. */
const UNTAGGED = sql`e.experiment_id IS NULL AND e.feature_flag_id IS NOT NULL`;

const counted = (experimentId: string): SQL => sql`e.kind = 'track' AND (e.experiment_id = ${experimentId} OR (${UNTAGGED}))`;

/**
 * An experiment's events `e` in a window, as one range of (experiment, time) rather than an equality and a time range:
 * only events_experiment_time_idx can read it so. Given the two conditions, the planner took the BRIN index (whose
 * block ranges not yet summarized match every window: most of the table under ingestion), events_experiment_idx
 * (where the time is the fourth column: every entry of the experiment), or, joined to many assignments, one BRIN and
 * user-index bitmap per assignment, all many times slower than the window's own range.
 */
const experimentWindow = (experimentId: string, w: CreatedWindow): SQL => w.upTo === null
  // A read's tail (no end): plain conditions. The planner estimates a row comparison's range from its first column
  // alone, the whole experiment, and read a tail of seconds with a sequential scan of the table (a cold read with
  // current rollups took 350 ms instead of 20 ms on the results bench); the tail is past its statistics' histogram,
  // so it is estimated small and read by index.
  ? sql`e.experiment_id = ${experimentId} AND ${windowOn(sql`e.created_at`, w)}`
  : sql`
  (e.experiment_id, e.created_at) > (${experimentId}::uuid, ${w.after?.toISOString() ?? '-infinity'}::timestamptz)
  AND (e.experiment_id, e.created_at) <= (${experimentId}::uuid, ${w.upTo.toISOString()}::timestamptz)`;

/** User ids in [from, to) in the column's order (either bound open when absent), for passes that split the users. */
export interface UserRange {
  from?: string;
  to?: string;
}

/** A list of user ids, or a relation with a user_id column (e.g. the users of a consumer's CTE). */
export type UserSet = string[] | SQL;

const onlyUsers = (column: SQL, users: UserSet | undefined): SQL =>
  users === undefined ? sql`TRUE`
    : Array.isArray(users) ? sql`${column} = ANY(${sql.param(users)}::text[])`
    : sql`${column} IN (${users})`;

const inRange = (column: SQL, range: UserRange): SQL => sql.join([
  range.from === undefined ? sql`TRUE` : sql`${column} >= ${range.from}`,
  range.to === undefined ? sql`TRUE` : sql`${column} < ${range.to}`,
], sql` AND `);

/**
 * Counted events of several metrics (one family: the event names rolled up together) in a window, per assigned user,
 * event name and UTC day: (user_id, variant_id, assigned_at, event_name, day, event_count, value_sum). `users`
 * restricts it to those users, `range` to a range of user ids (so that the window's users can be split over
 * statements that run at once); `untagged: false` (no untagged counted event exists up to the window's end,
 * `untaggedEventsExist`) reads the tagged events only.
 *
 * From the start, each event's assignment is one probe of assignments_experiment_user_key, read index-only. A later
 * window (seconds under ingestion, through events_experiment_time_idx for the tagged events and the untagged ones
 * alike) groups its events per (user, event name, day) first and probes the assignment once per group: a group
 * whose first event is at or after the assignment counts whole; one that began before it (a user assigned during
 * the window, after events of theirs) is counted again from its events at or after the assignment, and one that
 * ended before it counts nothing.
 */
export function countedEventsPerUserDay(
  experimentId: string, eventNames: string[], w: CreatedWindow,
  { users, range = {}, untagged = true }: { users?: UserSet; range?: UserRange; untagged?: boolean } = {},
): SQL {
  const ofUsers = sql`e.event_name = ANY(${sql.param(eventNames)}::text[]) AND ${onlyUsers(sql`e.user_id`, users)} AND ${inRange(sql`e.user_id`, range)}`;
  if (w.after === null) {
    return sql`
    SELECT a.user_id, a.variant_id, a.created_at AS assigned_at, e.event_name,
           (e.created_at AT TIME ZONE 'UTC')::date AS day, count(*)::bigint AS event_count, coalesce(sum(e.value), 0)::float8 AS value_sum
    FROM events e
    JOIN assignments a ON a.experiment_id = ${experimentId} AND a.user_id = e.user_id
    WHERE ${ofUsers} AND ${counted(experimentId)} AND ${windowOn(sql`e.created_at`, w)} AND e.created_at >= a.created_at
    GROUP BY a.user_id, a.variant_id, a.created_at, e.event_name, 5`;
  }
  const stream = (match: SQL) => sql`SELECT e.user_id, e.event_name, e.created_at, e.value FROM events e WHERE e.kind = 'track' AND ${match} AND ${ofUsers}`;
  const tagged = stream(experimentWindow(experimentId, w));
  const events = untagged ? sql`${tagged} UNION ALL ${stream(sql`${UNTAGGED} AND ${windowOn(sql`e.created_at`, w)}`)}` : tagged;
  return sql`
    SELECT a.user_id, a.variant_id, a.created_at AS assigned_at, g.event_name, g.day,
           CASE WHEN g.first_at >= a.created_at THEN g.event_count ELSE r.event_count END AS event_count,
           CASE WHEN g.first_at >= a.created_at THEN g.value_sum ELSE r.value_sum END AS value_sum
    FROM (
      SELECT e.user_id, e.event_name, (e.created_at AT TIME ZONE 'UTC')::date AS day, count(*)::bigint AS event_count,
             coalesce(sum(e.value), 0)::float8 AS value_sum, min(e.created_at) AS first_at, max(e.created_at) AS last_at
      FROM (${events}) e
      GROUP BY 1, 2, 3
    ) g
    JOIN assignments a ON a.experiment_id = ${experimentId} AND a.user_id = g.user_id AND g.last_at >= a.created_at
    LEFT JOIN LATERAL (
      SELECT count(*)::bigint AS event_count, coalesce(sum(e.value), 0)::float8 AS value_sum FROM events e
      WHERE g.first_at < a.created_at AND e.user_id = g.user_id AND e.event_name = g.event_name AND ${counted(experimentId)}
        AND ${windowOn(sql`e.created_at`, w)} AND e.created_at >= a.created_at AND (e.created_at AT TIME ZONE 'UTC')::date = g.day
    ) r ON TRUE`;
}

/**
 * Every counted event of one metric (from the start, up to `upTo` when given), each with its user's assignment, in
 * (user_id, created_at) order: (event_name, user_id, variant_id, created_at, value). Both kinds of counted event (tagged
 * with the experiment; untagged with a flag) come in that order from events_experiment_idx, whose INCLUDE columns make
 * the scans index-only, and the assignments from assignments_experiment_user_key: a merge join and a window over each
 * user's events then need no sort and no hash of the experiment's users. The consumer runs it with hash joins off
 * (`mergeOrdered` in the results store): costed on estimates, a hash join looks cheaper and is several times slower.
 * `range` keeps to a range of user ids, so that passes over disjoint ranges can run at once; `untagged: false` leaves
 * out the untagged stream when `untaggedEventsExist` says it is empty (one index scan then, with nothing to merge).
 */
export function countedEventsInUserOrder(
  experimentId: string, eventName: string, upTo: Date | null, { users, range = {}, untagged = true }: { users?: UserSet; range?: UserRange; untagged?: boolean } = {},
): SQL {
  const stream = (match: SQL) => sql`(
    SELECT e.event_name, e.user_id, e.created_at, e.value FROM events e
    WHERE ${match} AND e.event_name = ${eventName} AND e.kind = 'track' AND ${windowOn(sql`e.created_at`, { after: null, upTo })}
      AND ${onlyUsers(sql`e.user_id`, users)} AND ${inRange(sql`e.user_id`, range)}
    ORDER BY e.user_id, e.created_at)`;
  const tagged = stream(sql`e.experiment_id = ${experimentId}`);
  return sql`
    SELECT ev.event_name, ev.user_id, a.variant_id, ev.created_at, ev.value
    FROM (${untagged ? sql`${tagged} UNION ALL ${stream(UNTAGGED)}` : tagged}) ev
    JOIN assignments a ON a.experiment_id = ${experimentId} AND a.user_id = ev.user_id AND ev.created_at >= a.created_at
      AND ${onlyUsers(sql`a.user_id`, users)} AND ${inRange(sql`a.user_id`, range)}`;
}

/**
 * Whether any untagged counted event of the metrics (no experiment, a feature flag) exists up to `upTo`: (found). One
 * probe of events_experiment_idx per name; most metrics have none, and their reads then take one stream.
 */
export function untaggedEventsExist(eventNames: string[], upTo: Date | null): SQL {
  return sql`
    SELECT EXISTS (
      SELECT 1 FROM events e WHERE ${UNTAGGED} AND e.event_name = ANY(${sql.param(eventNames)}::text[]) AND e.kind = 'track'
        AND ${windowOn(sql`e.created_at`, { after: null, upTo })}
    ) AS found`;
}

/**
 * A user's counted events of one metric from the assignment up to `upTo`, as a LATERAL subquery over a consumer's
 * row that names the user, the event name and the assignment time: (event_count, value_sum). Index-only ranges of
 * events_experiment_idx (tagged; and untagged with a flag, unless `untagged` is false because `untaggedEventsExist`
 * found none), so its cost follows the users asked about, not the experiment's size.
 */
export function countedTotalsOfUser(
  experimentId: string, ref: { userId: SQL; eventName: SQL; assignedAt: SQL }, upTo: Date, untagged = true,
): SQL {
  const range = (match: SQL) => sql`
    SELECT count(*) AS event_count, sum(e.value) AS value_sum FROM events e
    WHERE ${match} AND e.event_name = ${ref.eventName} AND e.user_id = ${ref.userId} AND e.kind = 'track'
      AND e.created_at >= ${ref.assignedAt} AND e.created_at <= ${upTo.toISOString()}::timestamptz`;
  if (!untagged) return sql`SELECT event_count::bigint AS event_count, coalesce(value_sum, 0)::float8 AS value_sum FROM (${range(sql`e.experiment_id = ${experimentId}`)}) t`;
  return sql`
    SELECT sum(event_count)::bigint AS event_count, coalesce(sum(value_sum), 0)::float8 AS value_sum FROM (
      ${range(sql`e.experiment_id = ${experimentId}`)}
      UNION ALL
      ${range(UNTAGGED)}
    ) t`;
}

/**
 * The assignments of the given variants made in a window, as a relation `a` with the columns the caller names. A window
 * from the start reads the experiment's assignments in one scan; a later one takes one index range per variant of
 * assignments_experiment_variant_idx (experiment, variant, created_at), so a refresh reads only the new assignments.
 */
function assignmentsIn(experimentId: string, variantIds: string[], w: CreatedWindow, columns: SQL, where: SQL = sql`TRUE`): SQL {
  if (w.after === null) {
    return sql`(
      SELECT variant_id, ${columns} FROM assignments
      WHERE experiment_id = ${experimentId} AND variant_id = ANY(${sql.param(variantIds)}::uuid[]) AND ${windowOn(sql`created_at`, w)} AND ${where}
    ) a`;
  }
  return sql`(
    SELECT v.id AS variant_id, r.* FROM unnest(${sql.param(variantIds)}::uuid[]) AS v(id)
    JOIN LATERAL (
      SELECT ${columns} FROM assignments
      WHERE experiment_id = ${experimentId} AND variant_id = v.id AND ${windowOn(sql`created_at`, w)} AND ${where}
    ) r ON TRUE
  ) a`;
}

/** Assignments made in a window, per (variant_id, day): users. */
export function assignmentsPerVariantDay(experimentId: string, variantIds: string[], w: CreatedWindow): SQL {
  return sql`
    SELECT a.variant_id, (a.created_at AT TIME ZONE 'UTC')::date AS day, count(*)::bigint AS users
    FROM ${assignmentsIn(experimentId, variantIds, w, sql`created_at`)}
    GROUP BY 1, 2`;
}

/** The assignments of the given users, per (variant_id, day of assignment): users. */
export function assignmentDaysOfUsers(experimentId: string, users: string[]): SQL {
  return sql`
    SELECT variant_id, (created_at AT TIME ZONE 'UTC')::date AS day, count(*)::bigint AS users
    FROM assignments WHERE experiment_id = ${experimentId} AND user_id = ANY(${sql.param(users)}::text[])
    GROUP BY 1, 2`;
}

/**
 * Scalar top-level values of the stored contexts of assignments made in a window, per (attribute, value, variant_id):
 * users. Objects, arrays and nulls are left out; values are their JSON text (strings unquoted). Read like
 * assignmentsPerVariantDay, so a read of the last minute finds only its assignments.
 */
export function assignmentContextValues(experimentId: string, variantIds: string[], w: CreatedWindow): SQL {
  return sql`
    SELECT c.key AS attribute, c.value #>> '{}' AS value, a.variant_id, count(*)::bigint AS users
    FROM ${assignmentsIn(experimentId, variantIds, w, sql`context`, sql`context IS NOT NULL`)}
    CROSS JOIN LATERAL jsonb_each(a.context) c
    WHERE jsonb_typeof(c.value) IN ('string', 'number', 'boolean')
    GROUP BY 1, 2, 3`;
}

/**
 * Users exposed to more than one variant: assigned users with a `track` event of this experiment that names another
 * variant than their assignment (a client that reports the wrong variant, or two identities merged into one user id):
 * (user_id, variant_id, first_seen) with variant_id the assigned one. View events are written from the assignment
 * itself and never disagree with it. Only events that carry a variant can disagree: the check reads the tracked events
 * by (experiment, time) from the partial events_experiment_time_idx, whose INCLUDE columns say whether they do.
 *
 * A conflict belongs to a window when its event or the user's assignment falls in it: an event can come first (a
 * client that buckets by itself before the service assigns), and is then found when the assignment arrives. Events in
 * the window meet every assignment in the first part, so the second looks only at the new assignments' events before
 * the window: per new assignment (read as assignmentsIn does, one index range per variant of `variantIds`) and per
 * event name of the experiment, one range of events_experiment_idx (experiment, name, user, time up to the window's
 * start), a LATERAL, so a nested loop whatever the estimates. Those ranges hold only the events tagged with this
 * experiment before the user was assigned (usually none): a probe of events_user_idx visited every event of the user,
 * and a read after many new assignments of users with long histories took minutes. The names come from a loose scan
 * of the same index (one descent per name). A window from the start needs no second part: every assignment and event
 * up to its end meet in the first.
 */
export function conflictingExposures(experimentId: string, variantIds: string[], w: CreatedWindow): SQL {
  // Event e of this experiment (the range says so) names another variant than assignment a. The window's events are
  // grouped per (user, variant named) before the one probe of the user's assignment.
  const disagrees = sql`e.kind = 'track' AND e.variant_id IS NOT NULL AND e.variant_id <> a.variant_id`;
  // A new assignment's earlier events of one name: one range of events_experiment_idx (experiment, name, user, time).
  // Per name, in a LATERAL (the name a parameter of the index scan, not a hash joined after it), and with the kind
  // checked outside (OFFSET 0 keeps it there): given it, the planner took the partial events_experiment_time_idx
  // bounded by the experiment alone, every event of the experiment per assignment and name.
  const userEarlier = sql`e.experiment_id = ${experimentId} AND e.event_name = n.event_name AND e.user_id = a.user_id
          AND e.created_at <= ${w.after?.toISOString() ?? null}::timestamptz`;
  const byAssignment = w.after === null ? sql`` : sql`
      UNION ALL
      SELECT a.user_id, a.variant_id, x.seen
      FROM ${assignmentsIn(experimentId, variantIds, w, sql`user_id`)}
      CROSS JOIN LATERAL (
        SELECT min(e.created_at) AS seen
        FROM names n CROSS JOIN LATERAL (SELECT e.kind, e.variant_id, e.created_at FROM events e WHERE ${userEarlier} OFFSET 0) e
        WHERE ${disagrees}
      ) x
      WHERE x.seen IS NOT NULL`;
  return sql`
    ${w.after === null ? sql`` : sql`WITH RECURSIVE names(event_name) AS MATERIALIZED (
      (SELECT event_name FROM events WHERE experiment_id = ${experimentId} ORDER BY event_name LIMIT 1)
      UNION ALL
      SELECT (SELECT e.event_name FROM events e WHERE e.experiment_id = ${experimentId} AND e.event_name > n.event_name ORDER BY e.event_name LIMIT 1)
      FROM names n WHERE n.event_name IS NOT NULL
    )`}
    SELECT user_id, variant_id, min(seen) AS first_seen FROM (
      SELECT a.user_id, a.variant_id, g.seen
      FROM (
        SELECT e.user_id, e.variant_id AS claimed, min(e.created_at) AS seen FROM events e
        WHERE e.kind = 'track' AND e.variant_id IS NOT NULL AND ${experimentWindow(experimentId, w)}
        GROUP BY 1, 2
      ) g
      JOIN assignments a ON a.experiment_id = ${experimentId} AND a.user_id = g.user_id AND g.claimed <> a.variant_id${byAssignment}
    ) c
    GROUP BY user_id, variant_id`;
}

/** Every assignment of an experiment: (user_id, variant_id). */
export function experimentAssignments(experimentId: string): SQL {
  return sql`SELECT user_id, variant_id FROM assignments WHERE experiment_id = ${experimentId}`;
}

/** Every assignment with the text of one top-level attribute of its stored context: (user_id, variant_id, segment). */
export function assignmentSegments(experimentId: string, attribute: string): SQL {
  return sql`SELECT user_id, variant_id, context ->> ${attribute} AS segment FROM assignments WHERE experiment_id = ${experimentId}`;
}

/**
 * Pre-exposure history for CUPED: per assigned user, the counted events of a metric (same tagging rule) strictly
 * before the assignment: (user_id, event_count, value_sum).
 */
export function preExposureTotals(experimentId: string, eventName: string): SQL {
  return sql`
    SELECT a.user_id, count(*)::bigint AS event_count, coalesce(sum(e.value), 0)::float8 AS value_sum
    FROM assignments a
    JOIN events e ON e.user_id = a.user_id AND e.event_name = ${eventName} AND e.kind = 'track' AND e.created_at < a.created_at
      AND (e.experiment_id = ${experimentId} OR (${UNTAGGED}))
    WHERE a.experiment_id = ${experimentId}
    GROUP BY a.user_id`;
}

/** Users assigned to both experiments: (user_id, variant_a, variant_b). */
export function sharedAssignments(experimentA: string, experimentB: string): SQL {
  return sql`
    SELECT a.user_id, a.variant_id AS variant_a, b.variant_id AS variant_b
    FROM assignments a JOIN assignments b ON b.experiment_id = ${experimentB} AND b.user_id = a.user_id
    WHERE a.experiment_id = ${experimentA}`;
}

/** Per-variant sufficient statistics of one metric (see armMetricStats). */
export interface VariantMetricStats {
  variantId: string;
  /** Analysed users: the assigned users less those with a conflicting exposure. */
  users: number;
  /** Analysed users with at least one counted event of the metric. */
  converters: number;
  /** Sum and sum of squares of per-user value totals (users without events count 0). */
  valueSum: number;
  valueSumSquares: number;
}

/**
 * One metric's per-variant statistics over all time, by the rule above: (variant_id, users, converters, value_sum,
 * value_sumsq). The same numbers as the results' sample sizes and conversions of that metric, read in one statement
 * without the results rollup (the bandit's arms).
 */
export function armMetricStats(experimentId: string, eventName: string): SQL {
  return sql`
    WITH excluded AS (SELECT DISTINCT user_id FROM (${conflictingExposures(experimentId, [], ALL_TIME)}) x),
    per_user AS (
      SELECT user_id, sum(value_sum) AS total FROM (${countedEventsPerUserDay(experimentId, [eventName], ALL_TIME)}) e GROUP BY user_id
    )
    SELECT a.variant_id, count(*)::int AS users, count(u.user_id)::int AS converters,
           coalesce(sum(u.total), 0)::float8 AS value_sum, coalesce(sum(u.total * u.total), 0)::float8 AS value_sumsq
    FROM assignments a LEFT JOIN per_user u ON u.user_id = a.user_id
    WHERE a.experiment_id = ${experimentId} AND NOT EXISTS (SELECT 1 FROM excluded x WHERE x.user_id = a.user_id)
    GROUP BY a.variant_id`;
}
