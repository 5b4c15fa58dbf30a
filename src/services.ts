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
import { createIdpAuthService } from './modules/auth/idp/service.js';
import { createIdpAccountsService } from './modules/users/idp-accounts.js';
import { createUsersService } from './modules/users/service.js';
import { createSegmentsService } from './modules/segments/service.js';
import { createFlagsService } from './modules/feature-flags/service.js';
import { createEnvironmentsService } from './modules/environments/service.js';
import { apiKeysReadModel } from './modules/api-keys/read-model.js';
import { createSdkService } from './modules/sdk/service.js';
import { createOfrepService } from './modules/ofrep/service.js';
import { createRbacService } from './modules/rbac/service.js';
import { createIntegrationsService } from './modules/integrations/service.js';
import { createSecretBox, integrationsKey } from './modules/integrations/secrets.js';
import { createSplitUrlService } from './modules/split-url/service.js';
import { createExportService } from './modules/export/service.js';
import pino from 'pino';
import { createScheduler } from './platform/scheduler.js';
import { createExperimentsService } from './modules/experiments/service.js';
import { createMetricDefinitionsService } from './modules/metric-definitions/service.js';
import { createExperimentsReadModel } from './modules/experiments/read-model.js';
import { createFlagsReadModel } from './modules/feature-flags/read-model.js';
import { createMutualExclusionReadModel } from './modules/mutual-exclusion/read-model.js';
import { createMutualExclusionService } from './modules/mutual-exclusion/service.js';
import { createHoldoutService } from './modules/holdout/service.js';
import { createWizardService } from './modules/wizard/service.js';
import { createSchedulerHealthService } from './modules/scheduler/service.js';
import { createTrackingService } from './modules/tracking/service.js';
import { splitUrlConfigs } from './modules/split-url/config.js';
import { createAssignmentWriter, createEventWriter } from './modules/tracking/writer.js';
import { commitAnnouncer } from './modules/tracking/domain.js';
import { createTrackingData } from './modules/tracking/read-model.js';
import { createCountersService } from './modules/counters/service.js';
import { createBanditService } from './modules/bandit/service.js';
import { createResultsService } from './modules/results/service.js';
import { createInteractionsService } from './modules/interactions/service.js';
import { createPowerService } from './modules/power/service.js';
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
import { rolloutSchedulesReadModel } from './modules/rollout-schedules/read-model.js';
import { createErrorReportsService } from './modules/error-reports/service.js';
import { createSafetyService } from './modules/safety/service.js';
import { createMetricsService } from './modules/metrics/service.js';
import { createWarehouseService, experimentFacts } from './modules/warehouse/service.js';

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

/**
 * The composition root of the domain, and nothing else: each module is constructed once, in dependency order, and
 * given exactly the narrow interfaces it declares. Read models need only the database, so they come first, and
 * modules that would name each other are given each other's read models (docs/architecture.md, "Composition order").
 * A new module adds its construction where its dependencies exist, and its name to the returned object.
 */
export function createServices(deps: PlatformDeps) {
  const { config, clock, bus, audit } = deps;
  const db = deps.database.db;
  const platform = config.platform;

  // Accounts and access.
  const users = createUsersService({
    db,
    audit,
    clock,
    bus,
    bcryptRounds: config.bcryptRounds,
    rolesSyncedFromIdp: config.authProvider !== 'local' && config.syncRolesOnLogin,
  });
  const auth = createAuthService({
    db,
    clock,
    tokens: deps.tokens,
    users,
    maxAttempts: config.loginMaxAttempts,
    lockoutMinutes: config.loginLockoutMinutes,
  });
  // Identity-provider mode (AUTH_PROVIDER=cognito): bearer tokens and sign-in go to the provider.
  const idpAuth = config.authProvider === 'cognito'
    ? createIdpAuthService({
        idp: config.idp,
        syncRolesOnLogin: config.syncRolesOnLogin,
        accounts: createIdpAccountsService({ db, audit, clock, bus }),
        recordLogin: users.recordLogin,
        log: pino({ level: config.logLevel, name: 'auth' }),
        clock,
      })
    : undefined;
  // Environments: every flag's state and every API key belong to one (the flags read model seeds a new one's states).
  const environments = createEnvironmentsService({
    db, audit, clock, bus, flagStates: createFlagsReadModel(db), keysInEnvironment: apiKeysReadModel.keysInEnvironment,
  });
  const apiKeys = createApiKeysService({ db, audit, clock, bus, users, revalidateOwner: idpAuth?.revalidateOwner, environments });
  const rbac = createRbacService({ db, audit, clock, users });
  const integrations = createIntegrationsService({
    db,
    audit,
    clock,
    secrets: createSecretBox(integrationsKey(config.integrationsEncryptionKey, config.secretKey)),
  });
  const auditLogs = createAuditLogsService({ db, database: deps.database, audit, bus, clock, signingKey: platform.complianceHmacKey, loadActor: users.loadActor });
  const notificationLog = pino({ level: config.logLevel, name: 'notifications' });
  const notifications = createNotificationsService({
    db, audit, clock, users,
    mailer: platform.smtp && createMailer(platform.smtp),
    webhooks: platform.chatWebhooks,
    retry: platform.notificationRetry,
    onError: (error) => notificationLog.error({ err: error }, 'notification delivery failed'),
  });

  // Read models: the database only, so the services below that name each other can all be given them.
  const trackingData = createTrackingData(db);
  const flagsReadModel = createFlagsReadModel(db);
  const exclusionGroups = createMutualExclusionReadModel(db);
  const experimentsReadModel = createExperimentsReadModel({ db, exclusionGroups });

  // Targeting: segments, flags, experiments and what manages them.
  const segments = createSegmentsService({ db, audit, clock, bus, flags: flagsReadModel, experiments: experimentsReadModel, tracking: trackingData });
  const flags = createFlagsService({ db, audit, clock, bus, segments, tracking: trackingData, auditLogs, environments });
  const sdk = createSdkService({ snapshot: flags.snapshot, bus });
  const ofrep = createOfrepService({ flags, segments, sdk, apiKeys, bus, clock, secretKey: config.secretKey });
  const metricDefinitions = createMetricDefinitionsService({ db, audit, clock, experiments: experimentsReadModel, schedules: rolloutSchedulesReadModel });
  const experiments = createExperimentsService({
    db,
    audit,
    clock,
    bus,
    cache: config.cacheEnabled ? deps.cache : undefined,
    segments,
    metricDefinitions,
    users,
    splitUrl: config.deploymentProfile === 'full' ? splitUrlConfigs : undefined,
    notifications,
  });
  const mutualExclusion = createMutualExclusionService({ db, audit, clock, bus, experiments: experimentsReadModel });
  const holdout = createHoldoutService({ db, audit, clock, bus, tracking: trackingData });
  const wizard = createWizardService({ db, audit, clock, experiments });

  // Assignment and events.
  const committed = commitAnnouncer(bus, clock);
  const events = createEventWriter(db, clock, committed);
  const assignmentWriter = createAssignmentWriter(db, clock, committed);
  const bandit = createBanditService({ db, clock, bus, audit, experiments: experimentsReadModel, tracking: trackingData });
  const tracking = createTrackingService({
    db, clock, bus, events, assignments: assignmentWriter, experiments: experimentsReadModel, flags, holdout, segments, bandit,
  });
  const counters = createCountersService({ db, audit, redis: deps.redis, experiments: experimentsReadModel });

  // Statistics.
  const results = createResultsService({
    db, clock, bus, audit, cache: deps.cache, cacheEnabled: config.cacheEnabled, readTimeoutMs: config.resultsReadTimeoutMs,
    maxStalenessSeconds: config.resultsMaxStalenessSeconds,
    commitRollupMs: config.resultsCommitRollupMs,
    // A read holds its own connection while its statements run on others.
    parallel: deps.database.kind === 'postgres' ? Math.max(1, Math.min(config.resultsParallelQueries, config.databasePoolSize - 1)) : 1,
    experiments: {
      experiment: experimentsReadModel.experiment,
      activePage: experimentsReadModel.activePage,
      recordBayesianDecision: experiments.recordBayesianDecision,
      pauseAutomatically: experiments.pauseAutomatically,
    },
    announceSrm: (payload) => void notifications.notify('srm_detected', payload),
    definitions: metricDefinitions,
  });
  const interactions = createInteractionsService({ clock, experiments: experimentsReadModel, results, tracking: trackingData });
  const power = createPowerService();

  // Rollout and safety.
  const rolloutSchedules = createRolloutSchedulesService({
    db, audit, clock, flags, environments,
    guardrailCounts: trackingData.guardrailCounts,
    guardrailUserValues: trackingData.guardrailUserValues,
    definitions: metricDefinitions,
    announce: (notice) => void notifications.notify('rollout_guardrail_decision', notice),
  });
  const errorReports = createErrorReportsService({ db, clock, flags });
  const safety = createSafetyService({ db, audit, clock, flags, schedules: rolloutSchedules, errorReports, notifications, environments });
  const metrics = createMetricsService({ clock, errorReports, safety, flags });

  // Platform management and optional modules.
  const compliance = createComplianceService({ auditLogs, clock, signingKey: platform.complianceHmacKey });
  const llm = platform.llm && createLlmClient(platform.llm);
  const ai = createAiService({ llm, experiment: experiments.get, results: results.results });
  const llmExperiments = createLlmExperimentsService({ db, audit, clock, llm, experiment: experiments.get });
  const workspaces = createWorkspacesService({ db, users });
  const etl = createEtlService({ db, audit, config: platform.etl, glue: createGlueClient(platform.etl) });
  const splitUrl = createSplitUrlService({ experiments });
  const dataExport = createExportService({ clock, results, experiments: experimentsReadModel, flags, definitions: metricDefinitions, tracking: trackingData });

  const warehouseLog = pino({ level: config.logLevel, name: 'warehouse' });
  const warehouse = createWarehouseService({
    db, audit, clock, config: config.warehouse,
    experiment: experimentFacts(experimentsReadModel.experiment),
    definitions: metricDefinitions,
    onError: (error) => warehouseLog.error({ err: error }, 'warehouse run failed inside the platform'),
  });

  // Background jobs, in the order a tick runs them.
  const scheduler = createScheduler({
    database: deps.database,
    clock,
    bus,
    log: pino({ level: config.logLevel, name: 'scheduler' }),
    tickSeconds: config.schedulerTickSeconds,
  });
  scheduler.register('experiment-auto-start', 60, experiments.startScheduled);
  scheduler.register('experiment-auto-complete', 60, experiments.completeEnded);
  // The events' new block ranges summarized first, so that the rollup reads only its window's.
  scheduler.register('event-ranges', 60, trackingData.summarizeRanges);
  scheduler.register('results-rollup', config.resultsRollupIntervalSeconds, () => results.refreshActive());
  // Rollback first: a flag rolled back in this tick has its schedule paused before stages are applied.
  scheduler.register('safety-auto-rollback', 60, safety.runAutoRollback);
  // Guardrails next: a schedule whose guardrail degraded is rolled back and paused before its next stage is due.
  scheduler.register('rollout-guardrails', 60, rolloutSchedules.runGuardrails);
  scheduler.register('rollout-stages', 60, rolloutSchedules.runDue);
  scheduler.register('event-partitions', 3_600, trackingData.ensurePartitions);
  scheduler.register('login-failures-prune', 3_600, auth.pruneFailures);
  scheduler.register('warehouse-runs', 60, warehouse.tick);
  const schedulerHealth = createSchedulerHealthService({ db, clock, scheduler, loopEnabled: config.schedulerEnabled });

  return {
    users, apiKeys, environments, auth, idpAuth, rbac, integrations, notifications,
    trackingData, flagsReadModel, exclusionGroups, experimentsReadModel,
    segments, flags, sdk, ofrep, metricDefinitions, experiments, mutualExclusion, holdout, wizard,
    events, assignmentWriter, bandit, tracking, counters,
    results, interactions, power,
    rolloutSchedules, errorReports, safety, metrics,
    auditLogs, compliance, ai, llmExperiments, workspaces, etl, splitUrl, dataExport, warehouse,
    scheduler, schedulerHealth,
  };
}

export type Services = ReturnType<typeof createServices>;
