import { createHmac, randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { auditLogs } from '../../src/db/schema/audit-logs.js';
import { integrations } from '../../src/db/schema/integrations.js';
import { createSecretBox, integrationsKey } from '../../src/modules/integrations/secrets.js';
import {
  INTEGRATION_EXISTS,
  INTEGRATION_NOT_FOUND,
  INVALID_JSON_PAYLOAD,
  SECRETS_UNREADABLE,
  WEBHOOK_AUTH_FAILED,
} from '../../src/modules/integrations/service.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

let t: TestApp;
let admin: TestUser;
const I = '/api/v1/integrations';
const SECRET = 'whsec-Very-Secret-Value-42';
const TOKEN = 'ghp_TokenValueThatMustNeverLeak';

beforeAll(async () => {
  t = await testApp();
  admin = await t.user({ role: 'ADMIN' });
});
afterAll(() => t.close());

/** One configuration exists per type, so every test that needs one creates it and removes it again. */
async function withIntegration(body: Record<string, unknown>, fn: (created: Record<string, unknown>) => Promise<void>) {
  const res = await t.inject({ method: 'POST', url: I, headers: admin.headers, payload: body });
  expect(res.statusCode, res.body).toBe(201);
  try {
    await fn(res.json());
  } finally {
    await t.inject({ method: 'DELETE', url: `${I}/${body.integration_type as string}`, headers: admin.headers });
  }
}

const github = (extra: Record<string, unknown> = {}) => ({
  integration_type: 'github',
  is_active: true,
  encrypted_config: { token: TOKEN, repo_owner: 'acme', repo_name: 'shop', webhook_secret: SECRET },
  ...extra,
});

const sign = (body: string | Buffer, secret = SECRET) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

function deliver(body: string | Buffer, headers: Record<string, string>, type = 'github', app = t.app) {
  return app.inject({ method: 'POST', url: `${I}/webhooks/${type}`, payload: body, headers });
}

async function auditTrail(entityId: string) {
  return t.database.db.select().from(auditLogs).where(eq(auditLogs.entityId, entityId));
}

describe('configuration', () => {
  it('creates, reads, lists, merges and deletes; secrets never returned, encrypted at rest, audited without values', async () => {
    await withIntegration(github(), async (created) => {
      expect(created).toEqual({
        id: expect.any(String),
        integration_type: 'github',
        is_active: true,
        encrypted_config: { repo_name: 'shop', repo_owner: 'acme' },
        stored_secrets: ['token', 'webhook_secret'],
        last_sync_at: null,
        last_error: null,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
      const dev = await t.user({ role: 'DEVELOPER' });
      const got = await t.inject({ method: 'GET', url: `${I}/github`, headers: dev.headers });
      expect(got.json()).toEqual(created);
      const list = await t.inject({ method: 'GET', url: I, headers: dev.headers });
      expect(list.json()).toContainEqual(created);

      const [row] = await t.database.db.select().from(integrations).where(eq(integrations.id, created.id as string));
      expect(JSON.stringify(row)).not.toContain(SECRET);
      expect(JSON.stringify(row)).not.toContain(TOKEN);
      expect(row.encryptedSecrets).toMatch(/^v1\./);

      const put = await t.inject({
        method: 'PUT', url: `${I}/github`, headers: admin.headers,
        payload: { encrypted_config: { token: null, repo_name: 'store', api_password: 'p4ss' } },
      });
      expect(put.statusCode).toBe(200);
      expect(put.json()).toMatchObject({
        is_active: true,
        encrypted_config: { repo_owner: 'acme', repo_name: 'store' },
        stored_secrets: ['api_password', 'webhook_secret'],
      });
      // The kept webhook_secret still authenticates deliveries.
      const body = '{"zen":"kept"}';
      expect((await deliver(body, { 'x-hub-signature-256': sign(body), 'content-type': 'application/json' })).statusCode).toBe(200);

      const trail = await auditTrail(created.id as string);
      expect(trail.map((e) => e.action).sort()).toEqual(['integration_create', 'integration_update']);
      for (const text of [SECRET, TOKEN, 'p4ss']) expect(JSON.stringify(trail)).not.toContain(text);
      expect(trail.find((e) => e.action === 'integration_update')?.details).toEqual({ keys_set: ['api_password', 'repo_name'], keys_removed: ['token'] });

      for (const res of [put, got, list]) for (const text of [SECRET, TOKEN, 'p4ss']) expect(res.body).not.toContain(text);
    });
    expect((await t.inject({ method: 'GET', url: `${I}/github`, headers: admin.headers })).statusCode).toBe(404);
  });

  it('DELETE answers 204 and is audited; unknown type 404 on read, change and delete', async () => {
    await withIntegration({ integration_type: 'jira', encrypted_config: { base_url: 'https://jira.example', api_token: 'x' } }, async (created) => {
      expect(created.is_active).toBe(false);
      const del = await t.inject({ method: 'DELETE', url: `${I}/jira`, headers: admin.headers });
      expect(del.statusCode).toBe(204);
      expect((await auditTrail(created.id as string)).map((e) => e.action)).toContain('integration_delete');
    });
    for (const [method, payload] of [['GET', undefined], ['PUT', { is_active: true }], ['DELETE', undefined]] as const) {
      const res = await t.inject({ method, url: `${I}/jira`, headers: admin.headers, payload });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ detail: INTEGRATION_NOT_FOUND });
    }
  });

  it('one configuration per type: a second POST is 409 and changes nothing', async () => {
    await withIntegration(github(), async (created) => {
      const again = await t.inject({ method: 'POST', url: I, headers: admin.headers, payload: github({ is_active: false }) });
      expect(again.statusCode).toBe(409);
      expect(again.json()).toEqual({ detail: INTEGRATION_EXISTS });
      expect((await t.inject({ method: 'GET', url: `${I}/github`, headers: admin.headers })).json()).toEqual(created);
    });
  });

  it('422: github keys required (also after a merge), unknown type, bad key names and values', async () => {
    const missing = await t.inject({
      method: 'POST', url: I, headers: admin.headers, payload: { integration_type: 'github', encrypted_config: { repo_owner: 'a', token: 't' } },
    });
    expect(missing.statusCode).toBe(422);
    expect(missing.json().detail).toEqual([
      { type: 'missing', loc: ['body', 'encrypted_config', 'repo_name'], msg: 'Field required' },
      { type: 'missing', loc: ['body', 'encrypted_config', 'webhook_secret'], msg: 'Field required' },
    ]);
    for (const [payload, loc] of [
      [{ integration_type: 'gitlab' }, ['body', 'integration_type']],
      [{ integration_type: 'jira', encrypted_config: { 'bad key': 'x' } }, ['body', 'encrypted_config', 'bad key']],
      [{ integration_type: 'jira', encrypted_config: { port: 8080 } }, ['body', 'encrypted_config', 'port']],
      [{ integration_type: 'jira', is_active: 'yes' }, ['body', 'is_active']],
    ] as const) {
      const res = await t.inject({ method: 'POST', url: I, headers: admin.headers, payload });
      expect(res.statusCode).toBe(422);
      expect(res.json().detail[0].loc).toEqual(loc);
    }
    expect((await t.inject({ method: 'GET', url: `${I}/jira`, headers: admin.headers })).statusCode).toBe(404);
    expect((await t.inject({ method: 'GET', url: `${I}/gitlab`, headers: admin.headers })).statusCode).toBe(422);

    await withIntegration(github(), async (created) => {
      const res = await t.inject({ method: 'PUT', url: `${I}/github`, headers: admin.headers, payload: { encrypted_config: { webhook_secret: null } } });
      expect(res.statusCode).toBe(422);
      expect(res.json().detail).toEqual([{ type: 'missing', loc: ['body', 'encrypted_config', 'webhook_secret'], msg: 'Field required' }]);
      expect((await t.inject({ method: 'GET', url: `${I}/github`, headers: admin.headers })).json()).toEqual(created);
    });
  });

  it('401 without a token; ANALYST and VIEWER 403 everywhere; DEVELOPER reads only; superuser counts as ADMIN', async () => {
    expect((await t.inject({ method: 'GET', url: I })).statusCode).toBe(401);
    const routes = [
      ['GET', I, undefined], ['GET', `${I}/jira`, undefined], ['POST', I, { integration_type: 'jira' }],
      ['PUT', `${I}/jira`, { is_active: true }], ['DELETE', `${I}/jira`, undefined],
    ] as const;
    for (const role of ['ANALYST', 'VIEWER'] as const) {
      const user = await t.user({ role });
      for (const [method, url, payload] of routes) {
        expect((await t.inject({ method, url, headers: user.headers, payload })).statusCode, `${role} ${method} ${url}`).toBe(403);
      }
    }
    const dev = await t.user({ role: 'DEVELOPER' });
    for (const [method, url, payload] of routes.slice(2)) {
      expect((await t.inject({ method, url, headers: dev.headers, payload })).statusCode).toBe(403);
    }
    expect((await t.inject({ method: 'GET', url: `${I}/jira`, headers: admin.headers })).statusCode).toBe(404);
    const root = await t.user({ superuser: true });
    const res = await t.inject({ method: 'POST', url: I, headers: root.headers, payload: { integration_type: 'salesforce' } });
    expect(res.statusCode).toBe(201);
    expect((await t.inject({ method: 'DELETE', url: `${I}/salesforce`, headers: root.headers })).statusCode).toBe(204);
  });
});

describe('code host receiver', () => {
  it('200 {status: received} for a signed delivery, over the raw bytes whatever the Content-Type; nothing changes', async () => {
    await withIntegration(github(), async (created) => {
      const body = '{ "action":  "opened",\n "number": 7 }';
      for (const contentType of ['application/json', 'text/plain', 'application/x-www-form-urlencoded', undefined]) {
        const headers: Record<string, string> = { 'x-hub-signature-256': sign(body), 'x-github-event': 'pull_request' };
        if (contentType) headers['content-type'] = contentType;
        const res = await deliver(body, headers);
        expect(res.statusCode, String(contentType)).toBe(200);
        expect(res.json()).toEqual({ status: 'received' });
      }
      const upper = await deliver(body, { 'x-hub-signature-256': sign(body).toUpperCase().replace('SHA256=', 'sha256='), 'content-type': 'application/json' });
      expect(upper.statusCode).toBe(200);
      // Re-serialised JSON is not what was signed.
      const reserialised = await deliver(body, { 'x-hub-signature-256': sign(JSON.stringify(JSON.parse(body))), 'content-type': 'application/json' });
      expect(reserialised.statusCode).toBe(401);
      expect((await t.inject({ method: 'GET', url: `${I}/github`, headers: admin.headers })).json()).toEqual(created);
      expect((await auditTrail(created.id as string)).map((e) => e.action)).toEqual(['integration_create']);
    });
  });

  it('401 Webhook authentication failed for every refusal', async () => {
    const body = '{"ref":"main"}';
    const refused = async (headers: Record<string, string>, payload = body) => {
      const res = await deliver(payload, { 'content-type': 'application/json', ...headers });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ detail: WEBHOOK_AUTH_FAILED });
    };
    await refused({ 'x-hub-signature-256': sign(body) }); // no integration
    await withIntegration(github(), async () => {
      await refused({});
      await refused({ 'x-hub-signature-256': sign(body, 'wrong-secret') });
      await refused({ 'x-hub-signature-256': sign(body).slice('sha256='.length) });
      await refused({ 'x-hub-signature-256': sign(body).replace('sha256=', 'sha1=') });
      await refused({ 'x-hub-signature-256': sign(body).slice(0, -2) });
      await refused({ 'x-hub-signature-256': `${sign(body)}00` });
      await refused({ 'x-hub-signature-256': 'sha256=' + 'z'.repeat(64) });
      await refused({ 'x-hub-signature-256': sign(`${body} `) });
      await t.inject({ method: 'PUT', url: `${I}/github`, headers: admin.headers, payload: { is_active: false } });
      await refused({ 'x-hub-signature-256': sign(body) }); // inactive
    });
  });

  it('after authentication, a body that is not a JSON object is 400 Invalid JSON payload', async () => {
    await withIntegration(github(), async () => {
      for (const body of ['not json', '[1,2]', '"text"', '42', 'null', '', '{"a":', '[' .repeat(600) + ']'.repeat(600)]) {
        const res = await deliver(body, { 'x-hub-signature-256': sign(body), 'content-type': 'application/json' });
        expect(res.statusCode, body.slice(0, 10)).toBe(400);
        expect(res.json()).toEqual({ detail: INVALID_JSON_PAYLOAD });
      }
      const binary = randomBytes(64);
      expect((await deliver(binary, { 'x-hub-signature-256': sign(binary), 'content-type': 'application/octet-stream' })).statusCode).toBe(400);
      // Unauthenticated garbage is refused before the body is looked at.
      expect((await deliver('not json', { 'x-hub-signature-256': sign('other') })).statusCode).toBe(401);
    });
  });
});

describe('tracker and CRM receivers', () => {
  it.each(['jira', 'salesforce'])('%s: X-Webhook-Secret must equal the stored webhook_secret', async (type) => {
    await withIntegration({ integration_type: type, is_active: true, encrypted_config: { webhook_secret: SECRET, instance_url: 'https://x' } }, async () => {
      const body = '{"webhookEvent":"jira:issue_updated"}';
      const ok = await deliver(body, { 'x-webhook-secret': SECRET, 'content-type': 'application/json' }, type);
      expect(ok.statusCode).toBe(200);
      expect(ok.json()).toEqual({ status: 'received' });
      for (const headers of [{}, { 'x-webhook-secret': 'nope' }, { 'x-webhook-secret': `${SECRET}x` }] as Record<string, string>[]) {
        const res = await deliver(body, { 'content-type': 'application/json', ...headers }, type);
        expect(res.statusCode).toBe(401);
        expect(res.json()).toEqual({ detail: WEBHOOK_AUTH_FAILED });
      }
      expect((await deliver('[]', { 'x-webhook-secret': SECRET }, type)).json()).toEqual({ detail: INVALID_JSON_PAYLOAD });
    });
  });

  it('an integration without webhook_secret refuses every delivery', async () => {
    await withIntegration({ integration_type: 'jira', is_active: true, encrypted_config: { api_token: 't' } }, async () => {
      expect((await deliver('{}', { 'x-webhook-secret': '' }, 'jira')).statusCode).toBe(401);
      expect((await deliver('{}', {}, 'jira')).statusCode).toBe(401);
    });
  });
});

describe('encryption key', () => {
  it('a process with another key cannot open the secrets: deliveries 401, merges 409 until every secret is sent again', async () => {
    const other = await t.spawn({ INTEGRATIONS_ENCRYPTION_KEY: randomBytes(32).toString('hex') });
    await withIntegration(github(), async (created) => {
      const body = '{"a":1}';
      expect((await deliver(body, { 'x-hub-signature-256': sign(body) }, 'github', other.app)).statusCode).toBe(401);
      const read = await other.app.inject({ method: 'GET', url: `${I}/github`, headers: admin.headers });
      expect(read.json()).toEqual(created);
      const partial = await other.app.inject({ method: 'PUT', url: `${I}/github`, headers: admin.headers, payload: { encrypted_config: { webhook_secret: 'new' } } });
      expect(partial.statusCode).toBe(409);
      expect(partial.json()).toEqual({ detail: SECRETS_UNREADABLE });
      const toggle = await other.app.inject({ method: 'PUT', url: `${I}/github`, headers: admin.headers, payload: { is_active: true } });
      expect(toggle.json()).toEqual(created);
      const full = await other.app.inject({
        method: 'PUT', url: `${I}/github`, headers: admin.headers, payload: { encrypted_config: { webhook_secret: 'new', token: null } },
      });
      expect(full.statusCode).toBe(200);
      expect(full.json().stored_secrets).toEqual(['webhook_secret']);
      expect((await deliver(body, { 'x-hub-signature-256': sign(body, 'new') }, 'github', other.app)).statusCode).toBe(200);
    });
  });

  it('INTEGRATIONS_ENCRYPTION_KEY takes 64 hex digits or base64 of 32 bytes; otherwise startup stops', () => {
    const hex = randomBytes(32).toString('hex');
    expect(loadConfig({ INTEGRATIONS_ENCRYPTION_KEY: hex }).integrationsEncryptionKey?.toString('hex')).toBe(hex);
    const b64 = randomBytes(32);
    expect(loadConfig({ INTEGRATIONS_ENCRYPTION_KEY: b64.toString('base64') }).integrationsEncryptionKey).toEqual(b64);
    expect(loadConfig({ INTEGRATIONS_ENCRYPTION_KEY: b64.toString('base64url') }).integrationsEncryptionKey).toEqual(b64);
    for (const bad of ['short', randomBytes(16).toString('hex'), randomBytes(31).toString('base64'), `${hex}ff`]) {
      expect(() => loadConfig({ INTEGRATIONS_ENCRYPTION_KEY: bad })).toThrow(ConfigError);
    }
    expect(loadConfig({}).integrationsEncryptionKey).toBeUndefined();
  });

  it('derives the key from SECRET_KEY when none is set; sealed text opens only with its key and associated data', () => {
    const derived = integrationsKey(undefined, 'a-secret-key');
    expect(derived).toHaveLength(32);
    expect(integrationsKey(undefined, 'a-secret-key')).toEqual(derived);
    expect(integrationsKey(undefined, 'another-key')).not.toEqual(derived);
    const box = createSecretBox(derived);
    const sealed = box.seal({ webhook_secret: SECRET }, 'github');
    expect(sealed).not.toContain(SECRET);
    expect(box.seal({ webhook_secret: SECRET }, 'github')).not.toEqual(sealed);
    expect(box.open(sealed, 'github')).toEqual({ webhook_secret: SECRET });
    expect(box.open(sealed, 'jira')).toBeUndefined();
    expect(createSecretBox(integrationsKey(undefined, 'another-key')).open(sealed, 'github')).toBeUndefined();
    const [v, nonce, tag, data] = sealed.split('.');
    expect(box.open([v, nonce, tag.slice(0, 8), data].join('.'), 'github')).toBeUndefined();
    expect(box.open('garbage', 'github')).toBeUndefined();
  });
});

it('a core deployment does not serve integrations or their receivers (404)', async () => {
  const core = await t.spawn({ DEPLOYMENT_PROFILE: 'core' });
  expect((await core.app.inject({ method: 'GET', url: I, headers: admin.headers })).statusCode).toBe(404);
  expect((await core.app.inject({ method: 'POST', url: `${I}/webhooks/github`, payload: '{}' })).statusCode).toBe(404);
});
