import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_EMAIL_LIMIT } from '../../src/modules/notifications/service.js';
import { startSmtpSink } from '../helpers/fakes.js';
import { testApp, type TestApp } from '../helpers/test-app.js';

let t: TestApp;
let smtp: Awaited<ReturnType<typeof startSmtpSink>>;
beforeAll(async () => {
  smtp = await startSmtpSink();
  t = await testApp({ env: { SMTP_HOST: '127.0.0.1', SMTP_PORT: String(smtp.port), SMTP_FROM: 'Uplift <alerts@uplift.test>' } });
});
afterAll(async () => {
  await t.close();
  await smtp.close();
});

describe('test mail to an unverified address', () => {
  it('is limited to 5 an hour per account (429), while the account address stays unlimited', async () => {
    const user = await t.user({ role: 'DEVELOPER' });
    const put = (payload: object) => t.inject({ method: 'PUT', url: '/api/v1/notifications/preferences', headers: user.headers, payload });
    const sendTest = () => t.inject({ method: 'POST', url: '/api/v1/notifications/test', headers: user.headers, payload: {} });
    expect((await put({ email_enabled: true, email_address: 'stranger@example.org' })).statusCode).toBe(200);
    for (let i = 0; i < 5; i++) expect((await sendTest()).statusCode).toBe(200);
    const refused = await sendTest();
    expect([refused.statusCode, refused.json().detail]).toEqual([429, TEST_EMAIL_LIMIT]);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);

    expect((await put({ email_enabled: true, email_address: null })).statusCode).toBe(200);
    expect((await sendTest()).statusCode).toBe(200);
  });
});
