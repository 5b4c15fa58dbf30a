import { buildApp } from './app.js';
import { ConfigError, loadConfig, withDataDirSecret } from './config.js';

/** Process entry: read the environment, build the app, listen, and drain cleanly on SIGTERM/SIGINT. */
async function main(): Promise<void> {
  let config;
  let keyFile: string | undefined;
  try {
    const resolved = withDataDirSecret(process.env);
    keyFile = resolved.keyFile;
    config = loadConfig(resolved.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`Configuration error: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const { app, services } = await buildApp(config);
  if (keyFile) app.log.warn({ keyFile }, 'SECRET_KEY is not set: signing with the key generated for this data directory');
  else if (config.secretKeyIsDefault) app.log.warn('SECRET_KEY is not set: signing with a random key for this process only');
  if (config.firstSuperuser) {
    const outcome = await services.users.ensureSuperuser(config.firstSuperuser);
    app.log.info({ outcome }, 'first superuser checked');
  }
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    app.close().then(
      () => process.exit(0),
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
