import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Database } from './client.js';

const MIGRATION_LOCK_ID = 7_301_001;

/**
 * Applies the committed SQL files in src/db/migrations in name order, each once, each in its own transaction.
 * A session advisory lock makes concurrent boots of several API processes apply them exactly once.
 */
export async function migrate(database: Database, directory = migrationsDirectory()): Promise<string[]> {
  const files = readdirSync(directory).filter((f) => f.endsWith('.sql')).sort();
  return database.session(async (exec) => {
    const applied: string[] = [];
    // Waiting for another process's migrations, and a long migration, must not hit the statement timeout.
    const [{ statement_timeout: timeout }] = await exec<{ statement_timeout: string }>('SHOW statement_timeout');
    await exec('SET statement_timeout = 0');
    await exec(`SELECT pg_advisory_lock(${MIGRATION_LOCK_ID})`);
    try {
      await exec('CREATE TABLE IF NOT EXISTS uplift_migrations (id text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
      const done = new Set((await exec<{ id: string }>('SELECT id FROM uplift_migrations')).map((r) => r.id));
      for (const file of files) {
        const id = file.replace(/\.sql$/, '');
        if (done.has(id)) continue;
        const body = readFileSync(`${directory}/${file}`, 'utf8');
        try {
          await exec(`BEGIN;\n${body}\n;INSERT INTO uplift_migrations (id) VALUES ('${id}');\nCOMMIT;`);
        } catch (error) {
          await exec('ROLLBACK').catch(() => undefined);
          throw new Error(`Migration ${id} failed: ${(error as Error).message}`);
        }
        applied.push(id);
      }
    } finally {
      await exec(`SELECT pg_advisory_unlock(${MIGRATION_LOCK_ID})`);
      // Back to the connection's configured timeout (DATABASE_STATEMENT_TIMEOUT_SECONDS).
      await exec('SELECT set_config($1, $2, false)', ['statement_timeout', timeout]);
    }
    return applied;
  });
}

/** src/db/migrations when run from source; the build copies the folder beside the compiled file. */
export function migrationsDirectory(): string {
  const here = fileURLToPath(new URL('./migrations', import.meta.url));
  if (existsSync(here)) return here;
  throw new Error(`Migrations folder not found at ${here}; run npm run build`);
}
