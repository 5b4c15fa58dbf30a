#!/usr/bin/env node
/**
 * `uplift`: the operator's command line. `migrate` and `create-superuser` work on the database named by the same
 * settings as the server (DATABASE_URL or DATA_DIR); the other commands talk to a running Uplift over its API
 * (--url, and --token or --email with UPLIFT_PASSWORD).
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError, Option } from 'commander';
import { buildApp } from '../app.js';
import { ConfigError, loadConfig } from '../config.js';
import { connectDatabase } from '../db/client.js';
import { migrate } from '../db/migrate.js';
import { meetsPasswordRule, PASSWORD_RULE } from '../modules/users/passwords.js';
import { CliError, createApiClient, type ApiClient } from './api.js';
import { createPrinter } from './print.js';

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  env: Record<string, string | undefined>;
  fetch?: typeof fetch;
}

interface FlagView { id: string; key: string; name: string; status: string; is_active: boolean; rollout_percentage: number }
interface ExperimentView { id: string; key: string; name: string; status: string }

const EXPORTS = ['experiments', 'variants', 'feature-flags'] as const;

/**
 * The server's settings, as the CLI uses them. `keys: false` for a command that touches no key derived from
 * SECRET_KEY (migrate: it only runs SQL), so it needs no SECRET_KEY even where the server requires one (DATABASE_URL,
 * staging, production). create-superuser keeps the requirement: it builds the whole service, whose audit chain and
 * integration secrets are keyed from SECRET_KEY, and must see the same keys as the server.
 */
function configFrom(env: CliIo['env'], keys = true) {
  try {
    // The CLI never runs the background jobs: a server process does.
    return loadConfig({ ...env, SCHEDULER_ENABLED: 'false' }, { requireSecretKey: keys });
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError(`Configuration error: ${error.message}`, 2);
    throw error;
  }
}

async function findFlag(api: ApiClient, key: string): Promise<FlagView> {
  const page = await api.json<{ items: FlagView[] }>('GET', `/api/v1/feature-flags/?search=${encodeURIComponent(key)}&limit=1000`);
  const flag = page.items.find((f) => f.key === key);
  if (!flag) throw new CliError(`No feature flag has the key ${JSON.stringify(key)}`);
  return flag;
}

async function findExperiment(api: ApiClient, key: string): Promise<ExperimentView> {
  const list = await api.json<ExperimentView[]>('GET', `/api/v1/experiments/?search=${encodeURIComponent(key)}&limit=500`);
  const experiment = list.find((e) => e.key === key);
  if (!experiment) throw new CliError(`No experiment has the key ${JSON.stringify(key)}`);
  return experiment;
}

export function buildProgram(io: CliIo): Command {
  // Every printed text goes through the printer, which escapes what a terminal would act on (print.ts).
  const print = createPrinter(io);
  const program = new Command('uplift')
    .description('Operate an Uplift deployment: database set-up, and flags, experiments and exports over the API.')
    .configureOutput({ writeOut: print.parserOut, writeErr: print.parserErr })
    .exitOverride()
    .showHelpAfterError('(run uplift --help for usage)');

  const api = (cmd: Command): ApiClient => {
    const o = cmd.opts<{ url?: string; token?: string; email?: string }>();
    return createApiClient({
      url: o.url ?? io.env.UPLIFT_URL ?? 'http://localhost:8000',
      token: o.token ?? io.env.UPLIFT_TOKEN,
      email: o.email ?? io.env.UPLIFT_EMAIL,
      password: io.env.UPLIFT_PASSWORD,
      fetch: io.fetch,
    });
  };
  const withApi = (cmd: Command) =>
    cmd
      .option('--url <url>', 'Uplift base URL (env UPLIFT_URL; default http://localhost:8000)')
      .option('--token <token>', 'access token (env UPLIFT_TOKEN), or sign in with --email')
      .option('--email <email>', 'sign in with this account (env UPLIFT_EMAIL); the password is read from UPLIFT_PASSWORD');

  program
    .command('migrate')
    .description('Apply the database migrations (DATABASE_URL, or the embedded database under DATA_DIR)')
    .action(async () => {
      const config = configFrom(io.env, false);
      const database = await connectDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
      try {
        const applied = await migrate(database);
        print.line(applied.length ? `Applied ${applied.length} migration(s): ${applied.join(', ')}` : 'The database is up to date.');
      } finally {
        await database.close();
      }
    });

  program
    .command('create-superuser')
    .description('Create a superuser (ADMIN) account; the password is read from UPLIFT_PASSWORD')
    .requiredOption('--email <email>', 'email of the new account')
    .option('--username <name>', 'username', 'admin')
    .action(async (options: { email: string; username: string }) => {
      const password = io.env.UPLIFT_PASSWORD;
      if (!password) throw new CliError('Set UPLIFT_PASSWORD to the new account\'s password (it is never taken on the command line)', 2);
      if (!meetsPasswordRule(password)) throw new CliError(PASSWORD_RULE, 2);
      const { app, services } = await buildApp(configFrom(io.env));
      try {
        const outcome = await services.users.ensureSuperuser({ email: options.email, password, username: options.username });
        if (outcome === 'exists') throw new CliError(`An account with the email ${options.email} already exists`);
        if (outcome === 'username_taken') {
          throw new CliError(
            `Another account already has the username ${JSON.stringify(options.username)}: choose a free one with --username`,
          );
        }
        print.line(`Created superuser ${options.email}`);
      } finally {
        await app.close();
      }
    });

  withApi(
    program
      .command('export')
      .description('Download an export file (CSV or JSON) to standard output')
      .addArgument(new Command().createArgument('<kind>', 'what to export').choices(EXPORTS))
      .addOption(new Option('--format <format>', 'file format').choices(['csv', 'json']).default('csv')),
  ).action(async (kind: string, options: { format: string }, cmd: Command) => {
    print.document(await api(cmd).text(`/api/v1/export/${kind}?format=${options.format}`));
  });

  const flags = program.command('flags').description('Feature flags');
  withApi(flags.command('list').description('List feature flags').option('--search <text>', 'part of the name or key'))
    .action(async (options: { search?: string }, cmd: Command) => {
      const query = options.search ? `&search=${encodeURIComponent(options.search)}` : '';
      const page = await api(cmd).json<{ items: FlagView[] }>('GET', `/api/v1/feature-flags/?limit=1000${query}`);
      if (page.items.length === 0) return print.line('No feature flags.');
      print.table([
        ['KEY', 'NAME', 'STATUS', 'ON', 'ROLLOUT'],
        ...page.items.map((f) => [f.key, f.name, f.status, f.is_active ? 'yes' : 'no', `${f.rollout_percentage}%`]),
      ]);
    });
  withApi(
    flags
      .command('toggle')
      .description('Turn a flag on or off (flips it unless --on or --off is given)')
      .argument('<key>', 'flag key')
      .addOption(new Option('--on', 'turn it on').conflicts('off'))
      .addOption(new Option('--off', 'turn it off')),
  ).action(async (key: string, options: { on?: boolean; off?: boolean }, cmd: Command) => {
    const client = api(cmd);
    const flag = await findFlag(client, key);
    const on = options.on ? true : options.off ? false : !flag.is_active;
    const result = await client.json<{ results: { success: boolean; error: string | null }[] }>(
      'POST', '/api/v1/feature-flags/bulk-toggle', { ids: [flag.id], action: on ? 'enable' : 'disable' },
    );
    if (!result.results[0]?.success) throw new CliError(result.results[0]?.error ?? `Could not toggle ${key}`);
    print.line(`${key} is now ${on ? 'on' : 'off'}`);
  });

  const experiments = program.command('experiments').description('Experiments');
  withApi(experiments.command('results').description("Print an experiment's results as JSON").argument('<key>', 'experiment key'))
    .action(async (key: string, _options: unknown, cmd: Command) => {
      const client = api(cmd);
      const experiment = await findExperiment(client, key);
      print.document(`${JSON.stringify(await client.json('GET', `/api/v1/results/${experiment.id}`), null, 2)}\n`);
    });

  return program;
}

/** Runs one command line; answers the process exit code (0 success, 1 failure, 2 usage or configuration). */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const program = buildProgram(io);
  const print = createPrinter(io);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    print.error(`uplift: ${(error as Error).message}`);
    return error instanceof CliError ? error.exitCode : 1;
  }
}

const invokedDirectly = process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  const io: CliIo = { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t), env: process.env };
  runCli(process.argv.slice(2), io).then((code) => process.exit(code));
}
