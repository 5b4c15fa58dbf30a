/**
 * GET /metrics in Prometheus text format. HTTP traffic is measured by hooks on every route; the domain's own facts
 * (flag evaluations, assignments, events, group-commit batches, ruleset loads, scheduler jobs) arrive on the
 * diagnostics channels of `platform/telemetry.ts`; queue depths and database pool usage are read at scrape time.
 * Each app has its own registry. With METRICS_TOKEN set the route needs `Authorization: Bearer <token>`.
 */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { open } from './auth.js';
import { telemetry, type AssignmentsMade, type BatchWritten, type EventsIngested, type FlagsEvaluated, type JobRan } from './telemetry.js';

export interface MetricsOptions {
  token: string | undefined;
  /** Rows waiting in each group-commit queue. */
  queues: Record<string, () => number>;
  /** Connections of the database pool (absent for the embedded database). */
  pool?: () => { total: number; idle: number; waiting: number };
}

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const UNMATCHED = '<unmatched>';

function tokenMatches(header: string | undefined, token: string): boolean {
  const given = Buffer.from(header?.startsWith('Bearer ') ? header.slice(7) : '');
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const plugin: FastifyPluginAsync<MetricsOptions> = async (app, options) => {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'uplift_' });
  const m = {
    requests: new Counter({ name: 'uplift_http_requests_total', help: 'HTTP requests answered, by route template, method and status', labelNames: ['method', 'route', 'status'], registers: [registry] }),
    latency: new Histogram({ name: 'uplift_http_request_duration_seconds', help: 'Time to answer an HTTP request, by route template, method and status', labelNames: ['method', 'route', 'status'], buckets: LATENCY_BUCKETS, registers: [registry] }),
    flags: new Counter({ name: 'uplift_flag_evaluations_total', help: 'Flag evaluations (a user-route request evaluates every live flag)', registers: [registry] }),
    rulesets: new Counter({ name: 'uplift_ruleset_reloads_total', help: 'Compiled flag rulesets loaded from the database', registers: [registry] }),
    assignments: new Counter({ name: 'uplift_assignments_total', help: 'Assignment requests by outcome (assigned, or the reason a user was not)', labelNames: ['outcome'], registers: [registry] }),
    events: new Counter({ name: 'uplift_events_total', help: 'Tracking events by result (ingested, rejected)', labelNames: ['result'], registers: [registry] }),
    batches: new Histogram({ name: 'uplift_group_commit_batch_rows', help: 'Rows per group-commit statement, by writer', labelNames: ['writer'], buckets: [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000], registers: [registry] }),
    jobs: new Counter({ name: 'uplift_scheduler_job_runs_total', help: 'Scheduler job runs by job and result (ok, failed)', labelNames: ['job', 'result'], registers: [registry] }),
    jobSeconds: new Histogram({ name: 'uplift_scheduler_job_duration_seconds', help: 'Scheduler job run time', labelNames: ['job'], buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300], registers: [registry] }),
    sse: new Gauge({ name: 'uplift_sse_connections', help: 'Open Server-Sent Events streams, by route', labelNames: ['route'], registers: [registry] }),
  };
  new Gauge({
    name: 'uplift_group_commit_queue_rows', help: 'Rows waiting to be written, by writer', labelNames: ['writer'], registers: [registry],
    collect() {
      for (const [writer, depth] of Object.entries(options.queues)) this.set({ writer }, depth());
    },
  });
  const pool = options.pool;
  if (pool) {
    new Gauge({
      name: 'uplift_db_pool_connections', help: 'Database pool connections by state (idle, busy, waiting for one)', labelNames: ['state'], registers: [registry],
      collect() {
        const stats = pool();
        this.set({ state: 'idle' }, stats.idle);
        this.set({ state: 'busy' }, stats.total - stats.idle);
        this.set({ state: 'waiting' }, stats.waiting);
      },
    });
  }

  const subscriptions: Array<[(typeof telemetry)[keyof typeof telemetry], (message: unknown) => void]> = [];
  const on = <T>(channel: (typeof telemetry)[keyof typeof telemetry], fn: (message: T) => void) => {
    const handler = fn as (message: unknown) => void;
    channel.subscribe(handler);
    subscriptions.push([channel, handler]);
  };
  on<FlagsEvaluated>(telemetry.flagsEvaluated, (msg) => m.flags.inc(msg.flags));
  on(telemetry.rulesetLoaded, () => m.rulesets.inc());
  on<AssignmentsMade>(telemetry.assignments, (msg) => m.assignments.inc({ outcome: msg.outcome }, msg.count));
  on<EventsIngested>(telemetry.events, (msg) => {
    if (msg.accepted) m.events.inc({ result: 'ingested' }, msg.accepted);
    if (msg.rejected) m.events.inc({ result: 'rejected' }, msg.rejected);
  });
  on<BatchWritten>(telemetry.batchWritten, (msg) => m.batches.observe({ writer: msg.writer }, msg.rows));
  on<JobRan>(telemetry.jobRan, (msg) => {
    m.jobs.inc({ job: msg.job, result: msg.ok ? 'ok' : 'failed' });
    m.jobSeconds.observe({ job: msg.job }, msg.seconds);
  });
  app.addHook('onClose', async () => {
    for (const [channel, handler] of subscriptions) channel.unsubscribe(handler);
  });

  // Label children cached per route, method and status: the hot routes pay a map lookup, not prom-client's hashing.
  const children = new Map<string, { count: Counter.Internal; time: Histogram.Internal<'method' | 'route'> }>();
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? UNMATCHED;
    const key = `${request.method} ${reply.statusCode} ${route}`;
    let child = children.get(key);
    if (!child) {
      child = {
        count: m.requests.labels({ method: request.method, route, status: String(reply.statusCode) }),
        time: m.latency.labels({ method: request.method, route, status: String(reply.statusCode) }),
      };
      children.set(key, child);
    }
    child.count.inc();
    child.time.observe(reply.elapsedTime / 1000);
    done();
  });
  // Streams are hijacked and never reach onResponse: count them open from their request to the socket's close.
  // A stream route is one whose 200 answer is documented as text/event-stream.
  const streamRoutes = new Set<string>();
  app.addHook('onRoute', (route) => {
    const ok = (route.schema?.response as Record<string, { content?: Record<string, unknown> }> | undefined)?.[200];
    if (ok?.content?.['text/event-stream']) streamRoutes.add(route.url);
  });
  app.addHook('onRequest', (request, reply, done) => {
    const route = request.routeOptions.url;
    if (route && streamRoutes.has(route)) {
      m.sse.inc({ route });
      reply.raw.once('close', () => m.sse.dec({ route }));
    }
    done();
  });

  app.get('/metrics', {
    config: { access: open() },
    schema: { hide: true },
  }, async (request, reply) => {
    if (options.token && !tokenMatches(request.headers.authorization, options.token)) {
      return reply.code(401).header('WWW-Authenticate', 'Bearer').send({ detail: 'Not authenticated' });
    }
    return reply.type(registry.contentType).send(await registry.metrics());
  });
};

export const metricsPlugin = fp(plugin, { name: 'uplift-metrics' });
