import { buildApp } from './app.js';
import { ConfigError, loadConfig, withDataDirSecret } from './config.js';
import { bootstrapFirstSuperuser } from './modules/users/bootstrap.js';
import { checkDataDir, checkPort, StartupError } from './platform/startup.js';

/** A problem with a setting: one line naming it and what to do, no stack trace. */
function refuse(message: string): never {
  process.stderr.write(`Uplift cannot start: ${message}\n`);
  process.exit(2);
}

/** Process entry: read the environment, build the app, listen, and drain cleanly on SIGTERM/SIGINT. */
async function main(): Promise<void> {
  let config;
  let keyFile: string | undefined;
  try {
    // The port and the data directory first: nothing is created or migrated for a start that cannot listen.
    const settings = loadConfig(process.env, { requireSecretKey: false });
    await checkPort(settings.host, settings.port);
    if (!settings.databaseUrl && !settings.dataDir.startsWith('memory://')) {
      checkDataDir(settings.dataDir);
    }
    const resolved = withDataDirSecret(process.env);
    keyFile = resolved.keyFile;
    config = loadConfig(resolved.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`Configuration error: ${error.message}\n`);
      process.exit(2);
    }
    if (error instanceof StartupError) refuse(error.message);
    throw error;
  }
  const tracing = config.tracing && (await import('./platform/tracing.js')).startTracing(config.tracing);
  // Opening embedded storage refuses a data directory another process holds (StartupError).
  const { app, services } = await buildApp(config).catch((error: unknown) => (error instanceof StartupError ? refuse(error.message) : Promise.reject(error)));
  if (keyFile) app.log.warn({ keyFile }, 'SECRET_KEY is not set: signing with the key generated for this data directory');
  else if (config.secretKeyIsDefault) app.log.warn('SECRET_KEY is not set: signing with a random key for this process only');
  if (config.authProvider === 'cognito' && !(config.idp.userPoolId && config.idp.clientId)) {
    app.log.warn('AUTH_PROVIDER=cognito without IDP_USER_POOL_ID and IDP_CLIENT_ID: every sign-in is refused.');
  }
  if (config.firstSuperuser) {
    await bootstrapFirstSuperuser(services.users, config.firstSuperuser, app.log);
  }
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    app.close().then(
      // Spans still buffered are exported before the process goes.
      async () => {
        await tracing?.shutdown().catch(() => undefined);
        process.exit(0);
      },
      (error: unknown) => {
        app.log.error({ err: error }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  await app.listen({ host: config.host, port: config.port });
}

main().catch((error: unknown) => {
  process.stderr.write(`Uplift failed to start: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
