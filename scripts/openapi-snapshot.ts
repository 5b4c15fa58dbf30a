/**
 * Writes the two OpenAPI snapshots that pin the v1 contract (spec, Versioning 2): openapi/core.json and
 * openapi/full.json. Run `npm run openapi:snapshot` after an intended change to a route's shape, and commit both.
 */
import { writeFileSync } from 'node:fs';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { connectDatabase } from '../src/db/client.js';
import { migrate } from '../src/db/migrate.js';
import { stableStringify } from '../test/helpers/openapi.js';

const database = await connectDatabase({ dataDir: 'memory://' });
await migrate(database);
for (const profile of ['core', 'full'] as const) {
  const { app } = await buildApp(loadConfig({ ENVIRONMENT: 'test', DEPLOYMENT_PROFILE: profile, SCHEDULER_ENABLED: 'false', LOG_LEVEL: 'silent' }), { database });
  const doc = (await app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  writeFileSync(`openapi/${profile}.json`, `${stableStringify(doc)}\n`);
  await app.close();
}
await database.close();
console.log('wrote openapi/core.json and openapi/full.json');
