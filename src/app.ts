import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from './config.js';
import { connectDatabase, type Database } from './db/client.js';
import { migrate } from './db/migrate.js';
import { createLocalAuthenticator } from './modules/auth/service.js';
import { modulesFor } from './modules/index.js';
import { ensureEventPartitions } from './modules/tracking/partitions.js';
import { healthRoutes, readyRoutes } from './modules/meta/routes.js';
import { createAuditLog } from './platform/audit.js';
import { dashboardFallback, loadDashboard, registerDashboard } from './platform/dashboard.js';
import { authPlugin } from './platform/auth.js';
import { installBodyParsers } from './platform/body-parsers.js';
import { createBus, type Bus } from './platform/bus.js';
import { corsPlugin } from './platform/cors.js';
import { memoryCache, redisCache } from './platform/cache.js';
import { systemClock, type Clock } from './platform/clock.js';
import { installErrorHandling, routerErrors } from './platform/error-handler.js';
import { installInputGuard } from './platform/input-guard.js';
import { API_VERSION, registerOpenApi } from './platform/openapi.js';
import { metricsPlugin } from './platform/metrics.js';
import { memoryCounterStore, rateLimitPlugin, redisCounterStore } from './platform/rate-limit.js';
import { connectRedis, type Redis } from './platform/redis.js';
import { requestLogger } from './platform/request-logger.js';
import { createTokenService } from './platform/tokens.js';
import { validatorCompiler } from './platform/validator.js';
import { createServices, type Services } from './services.js';

export interface AppOverrides {
  clock?: Clock;
  /** An already connected and migrated database the caller owns (tests share one per file). */
  database?: Database;
  /** Namespaces Redis keys and bus channels, so test apps sharing one Redis or Postgres stay apart. */
  namespace?: string;
}

export interface UpliftApp {
  app: FastifyInstance;
  services: Services;
  database: Database;
  config: Config;
  clock: Clock;
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** Builds the whole service without listening: main.ts listens, tests inject. */
export async function buildApp(config: Config, overrides: AppOverrides = {}): Promise<UpliftApp> {
  const clock = overrides.clock ?? systemClock;
  const namespace = overrides.namespace ?? 'uplift';
  const ownsDatabase = !overrides.database;
  const database = overrides.database ?? (await connectDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.databasePoolSize,
    statementTimeoutMs: config.databaseStatementTimeoutSeconds * 1000,
  }));
  let redis: Redis | undefined;
  let subscriber: Redis | undefined;
  let bus: Bus | undefined;
  try {
    if (ownsDatabase) await migrate(database);
    if (config.redisUrl) {
      redis = connectRedis(config.redisUrl, `${namespace}:`);
      subscriber = connectRedis(config.redisUrl, `${namespace}:`);
    }
    bus = createBus({
      namespace: `${namespace}.`,
      redis: redis && subscriber ? { publisher: redis, subscriber } : undefined,
      postgres: database.connectionString
        ? { connectionString: database.connectionString, query: (text, params) => database.session((exec) => exec(text, params)) }
        : undefined,
    });
    const cache = redis ? redisCache(redis) : memoryCache();
    const tokens = createTokenService({ secretKey: config.secretKey, expireMinutes: config.accessTokenExpireMinutes, clock });
    const audit = createAuditLog({ clock });
    const services = createServices({ config, database, clock, bus, cache, audit, tokens, redis });

    const app = Fastify({
      logger: {
        level: config.logLevel,
        redact: ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers.cookie'],
      },
      bodyLimit: config.bodyLimitBytes,
      // Fastify accepts a hop count too; its option type lists only the other forms.
      trustProxy: config.trustedProxies as boolean | string[],
      childLoggerFactory: requestLogger,
      requestIdHeader: false,
      genReqId: (req) => {
        const incoming = req.headers['x-request-id'];
        return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
      },
      return503OnClosing: true,
      // Room for any path parameter the schemas accept (up to 255 characters, percent-encoded); beyond it 414.
      routerOptions: { maxParamLength: 4096 },
      frameworkErrors: routerErrors,
    }).withTypeProvider<TypeBoxTypeProvider>();

    // Loaded only when tracing is on, so a deployment without it never loads the OpenTelemetry packages.
    if (config.tracing) await app.register((await import('./platform/tracing.js')).tracingPlugin);
    app.setValidatorCompiler(validatorCompiler);
    const dashboard = loadDashboard(config.webDistDir);
    installErrorHandling(app, dashboardFallback(dashboard));
    installBodyParsers(app);
    installInputGuard(app);
    app.addHook('onSend', (request, reply, payload, done) => {
      reply.header('X-Request-ID', request.id);
      done(null, payload);
    });
    if (config.rateLimitEnabled) {
      await app.register(rateLimitPlugin, {
        store: redis ? redisCounterStore(redis) : memoryCounterStore(),
        sdkPerMinute: config.sdkRateLimitPerMinute,
        fullProfile: config.deploymentProfile === 'full',
      });
    }
    const authenticator = services.idpAuth
      ? { verifyBearer: services.idpAuth.verifyBearer, resolveApiKey: services.apiKeys.resolve }
      : createLocalAuthenticator({
          tokens,
          loadActor: services.users.loadActor,
          resolveApiKey: services.apiKeys.resolve,
        });
    await app.register(authPlugin, { authenticator });
    await app.register(metricsPlugin, {
      token: config.metricsToken,
      queues: { events: () => services.events.queued, assignments: () => services.assignmentWriter.queued },
      pool: database.poolStats,
    });
    if (config.corsOrigins.length > 0) await app.register(corsPlugin, { origins: config.corsOrigins });
    await registerOpenApi(app, config.deploymentProfile);
    await app.register(healthRoutes, { version: API_VERSION, profile: config.deploymentProfile, database: database.kind });
    const readyRedis = redis;
    await app.register(readyRoutes, {
      probes: {
        database: () => database.session((exec) => exec('SELECT 1')),
        ...(readyRedis ? { redis: () => readyRedis.ping() } : {}),
      },
    });
    for (const module of modulesFor(config.deploymentProfile)) {
      await module.register(app, { services, config });
    }
    if (dashboard) await registerDashboard(app, dashboard);

    const ownedBus = bus;
    app.addHook('onClose', async () => {
      // A tick in progress finishes before the database it writes to closes.
      await services.scheduler.stop();
      // Warehouse runs in flight finish (and free their slots) before the database closes.
      await services.warehouse.stop();
      // Events already queued are written before the connections go.
      await services.assignmentWriter.drain();
      await services.events.drain();
      // Rollups the last commits asked for finish (or never start) before the database closes.
      await services.results.stop();
      await ownedBus.close();
      services.idpAuth?.close();
      redis?.disconnect();
      subscriber?.disconnect();
      if (ownsDatabase) await database.close();
    });
    await ensureEventPartitions(database.db, clock.now());
    await app.ready();
    if (config.schedulerEnabled) services.scheduler.start();
    return { app, services, database, config, clock };
  } catch (error) {
    await bus?.close().catch(() => undefined);
    redis?.disconnect();
    subscriber?.disconnect();
    if (ownsDatabase) await database.close().catch(() => undefined);
    throw error;
  }
}
