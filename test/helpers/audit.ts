/** Shared by the audit log and compliance tests: the app they read entries from, and a change that writes one. */
import type { UpliftApp } from '../../src/app.js';
import { testApp, type TestApp, type TestUser } from './test-app.js';

/**
 * The full app (a one-second stream heartbeat, a fixed compliance key), a core-profile app over the same database,
 * and a user of each role.
 */
export async function auditApp(): Promise<{ t: TestApp; core: UpliftApp; admin: TestUser; analyst: TestUser; developer: TestUser; viewer: TestUser }> {
  const t = await testApp({ env: { AUDIT_STREAM_HEARTBEAT_SECONDS: '1', COMPLIANCE_HMAC_KEY: 'test-compliance-key' } });
  const core = await t.spawn({ DEPLOYMENT_PROFILE: 'core', COMPLIANCE_HMAC_KEY: 'test-compliance-key' });
  const [admin, analyst, developer, viewer] = await t.users('ADMIN', 'ANALYST', 'DEVELOPER', 'VIEWER');
  return { t, core, admin, analyst, developer, viewer };
}

/** Creating an API key writes one `api_key_create` audit entry by its owner, about the key: its id. */
export async function auditedChange(t: TestApp, user: TestUser): Promise<string> {
  return (await t.apiKey(user)).id;
}
