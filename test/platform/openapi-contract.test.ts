import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contractOf, operations, type OpenApiDoc } from '../helpers/openapi.js';
import { testApp, type TestApp } from '../helpers/test-app.js';

/**
 * Spec, Versioning 2-5: the snapshots in openapi/ pin every stable operation; the full document is a superset of the
 * core one; beta operations carry x-stability: beta; deprecated ones say so in flag and summary.
 * After an intended change of a route's shape run `npm run openapi:snapshot` and commit the snapshots.
 */
let t: TestApp;
const docs: Record<'core' | 'full', OpenApiDoc> = {} as never;
beforeAll(async () => {
  t = await testApp();
  const core = await t.spawn({ DEPLOYMENT_PROFILE: 'core' });
  const full = await t.spawn({ DEPLOYMENT_PROFILE: 'full' });
  docs.core = (await core.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  docs.full = (await full.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
});
afterAll(() => t.close());

describe.each(['core', 'full'] as const)('the %s profile', (profile) => {
  it('matches its snapshot for every stable operation, and lists no operation the snapshot lacks', () => {
    const snapshot = operations(JSON.parse(readFileSync(`openapi/${profile}.json`, 'utf8')));
    const current = operations(docs[profile]);
    for (const [name, op] of snapshot) {
      if (op['x-stability'] === 'beta') continue;
      expect(current.has(name), `${name} was removed from the ${profile} profile`).toBe(true);
      expect(contractOf(current.get(name)!), `${name} changed shape; if intended run npm run openapi:snapshot`).toEqual(contractOf(op));
    }
    const missing = [...current.keys()].filter((name) => !snapshot.has(name));
    expect(missing, 'operations not in the snapshot: run npm run openapi:snapshot').toEqual([]);
  });

  it('marks beta operations with x-stability and deprecated ones with flag and summary', () => {
    for (const [name, op] of operations(docs[profile])) {
      if (op['x-stability'] !== undefined) expect(op['x-stability'], name).toBe('beta');
      if (op.deprecated) expect(op.summary ?? '', name).toMatch(/\(deprecated\)$/);
      if ((op.summary ?? '').endsWith('(deprecated)')) expect(op.deprecated, name).toBe(true);
    }
  });
});

it('the full document is a superset of the core document', () => {
  const core = operations(docs.core);
  const full = operations(docs.full);
  for (const [name, op] of core) {
    expect(full.has(name), `${name} missing from full`).toBe(true);
    expect(contractOf(full.get(name)!)).toEqual(contractOf(op));
  }
});
