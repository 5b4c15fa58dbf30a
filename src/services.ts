import type { Config } from './config.js';
import type { Database } from './db/client.js';
import type { AuditLog } from './platform/audit.js';
import type { Bus } from './platform/bus.js';
import type { Cache } from './platform/cache.js';
import type { Clock } from './platform/clock.js';
import type { TokenService } from './platform/tokens.js';
import type { Redis } from './platform/redis.js';
import { createApiKeysService } from './modules/api-keys/service.js';
import { createAuthService } from './modules/auth/service.js';
import { createUsersService } from './modules/users/service.js';
import { createSegmentsService } from './modules/segments/service.js';
import { createFlagsService } from './modules/feature-flags/service.js';
import { createSdkService } from './modules/sdk/service.js';
import { createRbacService } from './modules/rbac/service.js';
import { createIntegrationsService } from './modules/integrations/service.js';
import { createSecretBox, integrationsKey } from './modules/integrations/secrets.js';
import { createSplitUrlService } from './modules/split-url/service.js';
import { createExportService } from './modules/export/service.js';
import pino from 'pino';
import { createScheduler } from './platform/scheduler.js';
import { createExperimentsService } from './modules/experiments/service.js';
import { createMutualExclusionService } from './modules/mutual-exclusion/service.js';
import { createHoldoutService } from './modules/holdout/service.js';
import { createWizardService } from './modules/wizard/service.js';
import { createSchedulerHealthService } from './modules/scheduler/service.js';
import { createTrackingService } from './modules/tracking/service.js';
import { normaliseSplitUrlConfig } from './modules/split-url/config.js';
import { createAssignmentWriter, createEventWriter } from './modules/tracking/writer.js';
import { ensureEventPartitions } from './modules/tracking/partitions.js';
import { variantMetricStats } from './modules/tracking/store.js';
import { createCountersService } from './modules/counters/service.js';
import { postgresCounterStore, redisCounterStore } from './modules/counters/store.js';
import { createBanditService } from './modules/bandit/service.js';
import { createResultsService } from './modules/results/service.js';
import { createInteractionsService } from './modules/interactions/service.js';
import { createPowerService } from './modules/power/service.js';
import { assignedUsersPerExperiment, assignmentOverlaps } from './modules/tracking/store.js';
import { compileSegment } from './modules/segments/service.js';
import { createAuditLogsService } from './modules/audit-logs/service.js';
import { createComplianceService } from './modules/compliance/service.js';
import { createNotificationsService } from './modules/notifications/service.js';
import { createAiService } from './modules/ai/service.js';
import { createLlmExperimentsService } from './modules/llm-experiments/service.js';
import { createWorkspacesService } from './modules/workspaces/service.js';
import { createEtlService, createGlueClient } from './modules/etl/service.js';
import { createMailer } from './platform/mailer.js';
import { createLlmClient } from './platform/llm.js';
import { createRolloutSchedulesService } from './modules/rollout-schedules/service.js';
import { createErrorReportsService } from './modules/error-reports/service.js';
import { createSafetyService } from './modules/safety/service.js';
import { createMetricsService } from './modules/metrics/service.js';

/** What the platform gives every service: storage, time, cross-process bus, cache and the audit writer. */
export interface PlatformDeps {
  config: Config;
  database: Database;
  clock: Clock;
  bus: Bus;
  cache: Cache;
  audit: AuditLog;
  tokens: TokenService;
  redis: Redis | undefined;
}

/** The composition root of the domain: each service gets exactly the collaborators it needs. */
export function createServices(deps: PlatformDeps) {
  const { config, clock, bus, audit } = deps;
  const db = deps.database.db;
  const users = createUsersService({
    db,
    audit,
    clock,
    bus,
    bcryptRounds: config.bcryptRounds,
    rolesSyncedFromIdp: config.authProvider !== 'local' && config.syncRolesOnLogin,
  });
  const apiKeys = createApiKeysService({ db, audit, clock, bus });
  const auth = createAuthService({
    db,
    clock,
    tokens: deps.tokens,
    users,
    maxAttempts: config.loginMaxAttempts,
    lockoutMinutes: config.loginLockoutMinutes,
  });
  const rbac = createRbacService({ db, audit, clock, users });
  const integrations = createIntegrationsService({
    db,
    audit,
    clock,
    secrets: createSecretBox(integrationsKey(config.integrationsEncryptionKey, config.secretKey)),
  });
  // Segments, flags and experiments name each other (in-use checks, rule validation): the closures read them when called.
  const segments = createSegmentsService({
    db,
    audit,
    clock,
    bus,
    flagsUsingSegment: (segmentId, tx) => flags.flagsUsingSegment(segmentId, tx),
    experimentsUsingSegment: (segmentId) => experiments.experimentsUsingSegment(segmentId),
    storedContexts: (limit) => tracking.sampleContexts(limit),
  });
  const flags = createFlagsService({ db, audit, clock, bus, segments, detachEvents: (flagId) => tracking.detachFlag(flagId) });
  const sdk = createSdkService({ snapshot: flags.snapshot });
  // Experiments and mutual exclusion groups name each other (membership, assignment): the closure reads it when called.
  const experiments = createExperimentsService({
    db,
    audit,
    clock,
    bus,
    cache: config.cacheEnabled ? deps.cache : undefined,
    segments,
    users,
    exclusionGroupOf: (experimentId) => mutualExclusion.activeGroupOf(experimentId),
    splitUrl: config.deploymentProfile === 'full' ? { normalise: (value, loc) => ({ ...normaliseSplitUrlConfig(value, loc) }) } : undefined,
    // Notifications are created further down; the closure reads them when a start or completion happens.
    announce: (kind, payload) => void notifications.notify(kind, payload),
  });
  const mutualExclusion = createMutualExclusionService({ db, audit, clock, bus, experiments });
  const holdout = createHoldoutService({ db, audit, clock, bus, usersSeenSince: (since, limit) => tracking.usersSeenSince(since, limit) });
  const wizard = createWizardService({ db, audit, clock, experiments });
  const scheduler = createScheduler({
    database: deps.database,
    clock,
    bus,
    log: pino({ level: config.logLevel, name: 'scheduler' }),
  });
  scheduler.register('experiment-auto-start', 60, (now) => experiments.startScheduled(now));
  scheduler.register('experiment-auto-complete', 60, (now) => experiments.completeEnded(now));
  const events = createEventWriter(db);
  const assignmentWriter = createAssignmentWriter(db);
  const bandit = createBanditService({
    db, clock, bus, audit, experiments,
    metricStats: (experimentId, eventName) => variantMetricStats(db, experimentId, eventName),
  });
  const tracking = createTrackingService({
    db, clock, bus, events, assignments: assignmentWriter,
    experiments,
    flags: {
      idByKey: async (key) => (await flags.snapshot()).byKey.get(key)?.row.id,
      exists: async (id) => (await flags.snapshot()).flags.some((f) => f.row.id === id),
    },
    activeHoldout: () => holdout.active(),
    targetingEnv: async (segmentIds, userId) => {
      if (segmentIds.length === 0) return {};
      const definitions = await segments.definitions(segmentIds);
      const idLists = definitions.filter((d) => d.kind === 'id_list').map((d) => d.id);
      const memberships = idLists.length ? await segments.memberOf(userId, idLists) : new Set<string>();
      const compiled = new Map(definitions.map((d) => [d.id, compileSegment(d, (id, subject) => subject === userId && memberships.has(id))]));
      return { segments: (id: string) => compiled.get(id) };
    },
    banditWeights: (experiment) => bandit.weightsFor(experiment),
  });
  const counters = createCountersService({
    db, audit,
    store: deps.redis ? redisCounterStore(deps.redis) : postgresCounterStore(db),
    experimentExists: async (id) => (await experiments.summaries([id])).length > 0,
  });
  const results = createResultsService({
    db, clock, bus, cache: deps.cache, cacheEnabled: config.cacheEnabled, experiments,
    announceSrm: (payload) => void notifications.notify('srm_detected', payload),
  });
  scheduler.register('results-rollup', 60, () => results.refreshActive());
  const interactions = createInteractionsService({
    clock, experiments, results,
    overlaps: (ids) => assignmentOverlaps(db, ids),
    assignedUsers: (ids) => assignedUsersPerExperiment(db, ids),
  });
  const power = createPowerService();
  const rolloutSchedules = createRolloutSchedulesService({ db, audit, clock, flags });
  const errorReports = createErrorReportsService({ db, clock, flagIdByKey: async (key) => (await flags.snapshot()).byKey.get(key)?.row.id });
  const safety = createSafetyService({
    db, audit, clock, flags, schedules: rolloutSchedules, errorReports,
    announce: (payload) => void notifications.notify('flag_rolled_back', payload),
  });
  const metrics = createMetricsService({
    clock, errorReports, safety,
    flagKeys: async () => new Map((await flags.snapshot()).flags.map((f) => [f.row.id, f.row.key])),
  });
  // Rollback first: a flag rolled back in this tick has its schedule paused before stages are applied.
  scheduler.register('safety-auto-rollback', 60, (now) => safety.runAutoRollback(now));
  scheduler.register('rollout-stages', 60, (now) => rolloutSchedules.runDue(now));
  scheduler.register('event-partitions', 3_600, (now) => ensureEventPartitions(db, now).then(() => undefined));
  scheduler.register('login-failures-prune', 3_600, (now) => auth.pruneFailures(now));
  const schedulerHealth = createSchedulerHealthService({ db, clock, scheduler, loopEnabled: config.schedulerEnabled });
  const platform = config.platform;
  const auditLogs = createAuditLogsService({ db, database: deps.database, audit, bus, clock, signingKey: platform.complianceHmacKey, loadActor: users.loadActor });
  const compliance = createComplianceService({ auditLogs, clock, signingKey: platform.complianceHmacKey });
  const notificationLog = pino({ level: config.logLevel, name: 'notifications' });
  const notifications = createNotificationsService({
    db, audit, clock, users,
    mailer: platform.smtp && createMailer(platform.smtp),
    webhooks: platform.chatWebhooks,
    retry: platform.notificationRetry,
    onError: (error) => notificationLog.error({ err: error }, 'notification delivery failed'),
  });
  const llm = platform.llm && createLlmClient(platform.llm);
  const ai = createAiService({ llm, experiment: (id) => experiments.get(id), results: (id) => results.results(id) });
  const llmExperiments = createLlmExperimentsService({ db, audit, clock, llm, experiment: (id) => experiments.get(id) });
  const workspaces = createWorkspacesService({ db, users });
  const etl = createEtlService({ db, audit, config: platform.etl, glue: createGlueClient(platform.etl) });
  const splitUrl = createSplitUrlService({ experiments });
  // The results engine is not wired yet: until it is, every export result column is empty (issue 8).
  const dataExport = createExportService({ clock, results: { resultsFor: (id) => results.exportResults(id) }, experiments, flags, tracking });
  return { users, apiKeys, auth, rbac, integrations, segments, flags, sdk, experiments, mutualExclusion, holdout, wizard, scheduler, schedulerHealth, events, assignmentWriter, tracking, counters, bandit, auditLogs, compliance, notifications, ai, llmExperiments, workspaces, etl, splitUrl, dataExport, rolloutSchedules, errorReports, safety, metrics, results, interactions, power };
}

export type Services = ReturnType<typeof createServices>;
