import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/test-app.js';

/** Without SMTP_HOST the server cannot send email: preferences say so, so the dashboard can warn before it is enabled. */
let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

describe('email_configured on notification preferences', () => {
  it('is false on a server without SMTP_HOST, on GET, on PUT and in the admin list, and is not audited', async () => {
    const admin = await t.user({ role: 'ADMIN' });
    const read = await t.inject({ method: 'GET', url: '/api/v1/notifications/preferences', headers: admin.headers });
    expect(read.statusCode).toBe(200);
    expect(read.json().email_configured).toBe(false);

    const saved = await t.inject({ method: 'PUT', url: '/api/v1/notifications/preferences', headers: admin.headers, payload: { email_enabled: true } });
    expect(saved.statusCode).toBe(200);
    expect(saved.json()).toMatchObject({ email_enabled: true, email_configured: false });

    const listed = await t.inject({ method: 'GET', url: '/api/v1/notifications/admin/preferences', headers: admin.headers });
    expect(listed.json().items.find((p: { user_id: string }) => p.user_id === admin.id).email_configured).toBe(false);

    // Read-only: it is not a setting, so a PUT naming it is refused like any unknown field.
    const refused = await t.inject({ method: 'PUT', url: '/api/v1/notifications/preferences', headers: admin.headers, payload: { email_configured: true } });
    expect(refused.statusCode).toBe(422);

    const audit = await t.inject({ method: 'GET', url: '/api/v1/audit-logs/?action=notification_preferences_update', headers: admin.headers });
    const entry = audit.json().items.find((e: { entity_id: string }) => e.entity_id === admin.id);
    expect(entry.after).not.toHaveProperty('email_configured');
  });
});
