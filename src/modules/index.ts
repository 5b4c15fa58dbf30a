import type { FastifyInstance } from 'fastify';
import type { Config, DeploymentProfile } from '../config.js';
import type { Services } from '../services.js';
import { adminUsersRoutes } from './admin-users/routes.js';
import { apiKeysRoutes } from './api-keys/routes.js';
import { authRoutes } from './auth/routes.js';
import { idpAuthRoutes } from './auth/idp/routes.js';
import { informationalRoutes } from './meta/routes.js';
import { rbacRoutes } from './rbac/routes.js';
import { integrationsRoutes } from './integrations/routes.js';
import { splitUrlRoutes } from './split-url/routes.js';
import { splitUrlUnavailable } from './split-url/service.js';
import { exportRoutes } from './export/routes.js';
import { usersRoutes } from './users/routes.js';
import { segmentsRoutes } from './segments/routes.js';
import { featureFlagsRoutes } from './feature-flags/routes.js';
import { environmentsRoutes } from './environments/routes.js';
import { sdkRoutes } from './sdk/routes.js';
import { ofrepRoutes } from './ofrep/routes.js';
import { experimentsRoutes } from './experiments/routes.js';
import { metricDefinitionsRoutes } from './metric-definitions/routes.js';
import { mutualExclusionRoutes } from './mutual-exclusion/routes.js';
import { holdoutRoutes } from './holdout/routes.js';
import { wizardRoutes } from './wizard/routes.js';
import { schedulerRoutes } from './scheduler/routes.js';
import { trackingRoutes } from './tracking/routes.js';
import { countersRoutes } from './counters/routes.js';
import { banditRoutes } from './bandit/routes.js';
import { experimentResultsRoutes, resultsRoutes } from './results/routes.js';
import { powerRoutes } from './power/routes.js';
import { interactionsRoutes } from './interactions/routes.js';
import { auditLogsRoutes } from './audit-logs/routes.js';
import { complianceEventsRoutes, complianceModuleRoutes } from './compliance/routes.js';
import { notificationsRoutes } from './notifications/routes.js';
import { aiRoutes } from './ai/routes.js';
import { mcpRoutes } from './mcp/routes.js';
import { etlRoutes } from './etl/routes.js';
import { llmExperimentsRoutes } from './llm-experiments/routes.js';
import { workspacesRoutes } from './workspaces/routes.js';
import { rolloutSchedulesRoutes } from './rollout-schedules/routes.js';
import { safetyRoutes } from './safety/routes.js';
import { errorReportsRoutes } from './error-reports/routes.js';
import { metricsRoutes } from './metrics/routes.js';
import { warehouseRoutes } from './warehouse/routes.js';

export interface ModuleContext {
  services: Services;
  config: Config;
}

/**
 * Every route module with the deployment profiles that serve it. A `core` deployment registers only core modules,
 * so module routes answer 404 there; a new module adds one entry here and nothing else changes.
 */
export interface ModuleEntry {
  name: string;
  profiles: readonly DeploymentProfile[];
  register(app: FastifyInstance, ctx: ModuleContext): PromiseLike<unknown>;
}

const EVERY_PROFILE = ['core', 'full'] as const;

export const MODULES: ModuleEntry[] = [
  {
    name: 'auth',
    profiles: EVERY_PROFILE,
    register: (app, { services, config }) =>
      services.idpAuth
        ? app.register(idpAuthRoutes, { prefix: '/api/v1/auth', idp: services.idpAuth, selfSignup: config.idpSelfSignupEnabled })
        : app.register(authRoutes, { prefix: '/api/v1/auth', auth: services.auth, users: services.users }),
  },
  {
    name: 'users',
    profiles: EVERY_PROFILE,
    register: (app, { services, config }) =>
      app.register(usersRoutes, { prefix: '/api/v1/users', users: services.users, localProvider: config.authProvider === 'local' }),
  },
  {
    name: 'admin-users',
    profiles: EVERY_PROFILE,
    register: (app, { services }) => app.register(adminUsersRoutes, { prefix: '/api/v1/admin/users', users: services.users }),
  },
  {
    name: 'api-keys',
    profiles: EVERY_PROFILE,
    register: (app, { services }) => app.register(apiKeysRoutes, { prefix: '/api/v1/api-keys', apiKeys: services.apiKeys }),
  },
  {
    name: 'informational',
    profiles: EVERY_PROFILE,
    register: (app) => app.register(informationalRoutes),
  },
  {
    name: 'feature-flags',
    profiles: EVERY_PROFILE,
    register: (app, { services }) => app.register(featureFlagsRoutes, { prefix: '/api/v1/feature-flags', flags: services.flags }),
  },
  {
    name: 'environments',
    profiles: EVERY_PROFILE,
    register: (app, { services }) => app.register(environmentsRoutes, { prefix: '/api/v1/environments', environments: services.environments }),
  },
  {
    name: 'segments',
    profiles: EVERY_PROFILE,
    register: (app, { services }) => app.register(segmentsRoutes, { prefix: '/api/v1/segments', segments: services.segments }),
  },
  {
    name: 'sdk',
    profiles: EVERY_PROFILE,
    register: (app, { services, config }) =>
      app.register(sdkRoutes, {
        prefix: '/api/v1/sdk',
        sdk: services.sdk,
        keys: services.apiKeys,
        heartbeatSeconds: config.sdkStreamHeartbeatSeconds,
        maxConnections: config.sdkStreamMaxConnections,
        maxBufferBytes: config.sdkStreamMaxBufferBytes,
      }),
  },
  {
    // The OpenFeature Remote Evaluation Protocol: flags are core, so every profile serves it, at the path OFREP fixes.
    name: 'ofrep',
    profiles: EVERY_PROFILE,
    register: (app, { services, config }) =>
      app.register(ofrepRoutes, { prefix: '/ofrep/v1', ofrep: services.ofrep, heartbeatSeconds: config.sdkStreamHeartbeatSeconds }),
  },
  {
    name: 'rbac',
    profiles: ['full'],
    register: (app, { services }) => app.register(rbacRoutes, { prefix: '/api/v1/rbac', rbac: services.rbac }),
  },
  {
    name: 'integrations',
    profiles: ['full'],
    register: (app, { services }) =>
      app.register(integrationsRoutes, { prefix: '/api/v1/integrations', integrations: services.integrations }),
  },
  {
    name: 'split-url',
    profiles: ['full'],
    register: (app, { services }) => app.register(splitUrlRoutes, { prefix: '/api/v1/experiments', splitUrl: services.splitUrl }),
  },
  {
    // Core serves the same preview contract and answers 501 (spec: module features in a core deployment).
    name: 'split-url-core',
    profiles: ['core'],
    register: (app) => app.register(splitUrlRoutes, { prefix: '/api/v1/experiments', splitUrl: splitUrlUnavailable }),
  },
  {
    name: 'export',
    profiles: ['full'],
    register: (app, { services }) => app.register(exportRoutes, { prefix: '/api/v1/export', exporter: services.dataExport }),
  },
  {
    name: 'experiments',
    profiles: EVERY_PROFILE,
    register: (app, { services }) =>
      app.register(experimentsRoutes, { prefix: '/api/v1/experiments', experiments: services.experiments }),
  },
  {
    // Core: an experiment metric may name a definition, and experiments are core.
    name: 'metric-definitions',
    profiles: EVERY_PROFILE,
    register: (app, { services }) =>
      app.register(metricDefinitionsRoutes, { prefix: '/api/v1/metric-definitions', definitions: services.metricDefinitions }),
  },
  {
    name: 'mutual-exclusion',
    profiles: EVERY_PROFILE,
    register: (app, { services }) =>
      app.register(mutualExclusionRoutes, { prefix: '/api/v1/mutual-exclusion-groups', groups: services.mutualExclusion }),
  },
  {
    name: 'holdout',
    profiles: EVERY_PROFILE,
    register: (app, { services }) => app.register(holdoutRoutes, { prefix: '/api/v1/holdout', holdout: services.holdout }),
  },
  {
    name: 'wizard',
    profiles: EVERY_PROFILE,
    register: (app, { services }) => app.register(wizardRoutes, { prefix: '/api/v1/wizard', wizard: services.wizard }),
  },
  {
    name: 'scheduler',
    profiles: EVERY_PROFILE,
    register: (app, { services }) =>
      app.register(schedulerRoutes, { prefix: '/api/v1/scheduler', schedulerHealth: services.schedulerHealth }),
  },
  {
    name: 'tracking',
    profiles: EVERY_PROFILE,
    register: (app, { services }) => app.register(trackingRoutes, { prefix: '/api/v1/tracking', tracking: services.tracking }),
  },
  {
    name: 'counters',
    profiles: EVERY_PROFILE,
    register: (app, { services }) => app.register(countersRoutes, { prefix: '/api/v1/counters', counters: services.counters }),
  },
  {
    name: 'results',
    profiles: EVERY_PROFILE,
    register: (app, { services }) => app.register(resultsRoutes, { prefix: '/api/v1/results', results: services.results }),
  },
  {
    // The experiment-scoped result routes share the experiments prefix (a second plugin on it).
    name: 'experiment-results',
    profiles: EVERY_PROFILE,
    register: (app, { services }) =>
      app.register(experimentResultsRoutes, { prefix: '/api/v1/experiments', results: services.results }),
  },
  {
    name: 'power',
    profiles: EVERY_PROFILE,
    register: (app, { services }) => app.register(powerRoutes, { prefix: '/api/v1/power', power: services.power }),
  },
  {
    name: 'interactions',
    profiles: EVERY_PROFILE,
    register: (app, { services }) =>
      app.register(interactionsRoutes, { prefix: '/api/v1/interactions', interactions: services.interactions }),
  },
  {
    name: 'bandit',
    profiles: EVERY_PROFILE,
    register: (app, { services }) => app.register(banditRoutes, { prefix: '/api/v1/bandit', bandit: services.bandit }),
  },
  {
    name: 'audit-logs',
    profiles: EVERY_PROFILE,
    register: (app, { services, config }) =>
      app.register(auditLogsRoutes, {
        prefix: '/api/v1/audit-logs',
        auditLogs: services.auditLogs,
        heartbeatSeconds: config.platform.auditStreamHeartbeatSeconds,
        maxConnections: config.platform.auditStreamMaxConnections,
      }),
  },
  {
    name: 'compliance-audit-events',
    profiles: EVERY_PROFILE,
    register: (app, { services }) =>
      app.register(complianceEventsRoutes, { prefix: '/api/v1/compliance', compliance: services.compliance }),
  },
  {
    name: 'compliance',
    profiles: ['full'],
    register: (app, { services }) =>
      app.register(complianceModuleRoutes, { prefix: '/api/v1/compliance', compliance: services.compliance }),
  },
  {
    name: 'notifications',
    profiles: EVERY_PROFILE,
    register: (app, { services }) =>
      app.register(notificationsRoutes, { prefix: '/api/v1/notifications', notifications: services.notifications }),
  },
  {
    name: 'ai',
    profiles: EVERY_PROFILE,
    register: (app, { services }) => app.register(aiRoutes, { prefix: '/api/v1/ai', ai: services.ai }),
  },
  {
    name: 'mcp',
    profiles: EVERY_PROFILE,
    register: (app) => app.register(mcpRoutes, { prefix: '/api/v1/mcp' }),
  },
  {
    name: 'etl',
    profiles: EVERY_PROFILE,
    register: (app, { services }) => app.register(etlRoutes, { prefix: '/api/v1/etl', etl: services.etl }),
  },
  {
    name: 'llm-experiments',
    profiles: EVERY_PROFILE,
    register: (app, { services }) =>
      app.register(llmExperimentsRoutes, { prefix: '/api/v1/llm-experiments', llmExperiments: services.llmExperiments }),
  },
  {
    name: 'workspaces',
    profiles: ['full'],
    register: (app, { services }) => app.register(workspacesRoutes, { prefix: '/api/v1/workspaces', workspaces: services.workspaces }),
  },
  {
    name: 'rollout-schedules',
    profiles: EVERY_PROFILE,
    register: (app, { services }) =>
      app.register(rolloutSchedulesRoutes, { prefix: '/api/v1/rollout-schedules', schedules: services.rolloutSchedules }),
  },
  {
    name: 'safety',
    profiles: EVERY_PROFILE,
    register: (app, { services }) => app.register(safetyRoutes, { prefix: '/api/v1/safety', safety: services.safety }),
  },
  {
    // Beside the tracking module's plugin under the same prefix: error reports are their own domain.
    name: 'error-reports',
    profiles: EVERY_PROFILE,
    register: (app, { services }) => app.register(errorReportsRoutes, { prefix: '/api/v1/tracking', errorReports: services.errorReports }),
  },
  {
    name: 'metrics',
    profiles: EVERY_PROFILE,
    register: (app, { services }) => app.register(metricsRoutes, { prefix: '/api/v1/metrics', metrics: services.metrics }),
  },
  {
    name: 'warehouse',
    profiles: ['full'],
    register: (app, { services }) =>
      app.register(warehouseRoutes, { prefix: '/api/v1/warehouse/analysis', warehouse: services.warehouse }),
  },
];

export function modulesFor(profile: DeploymentProfile): ModuleEntry[] {
  return MODULES.filter((m) => m.profiles.includes(profile));
}
