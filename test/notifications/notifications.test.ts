import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CHANNEL_NOT_ENABLED,
  NO_CHANNEL_ENABLED,
  WEBHOOK_URL_NOT_ALLOWED,
  WEBHOOK_URL_REQUIRED,
} from '../../src/modules/notifications/service.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';
import { startHttpServer, startSmtpSink } from '../helpers/fakes.js';
import { experiment } from '../helpers/fixtures.js';

let t: TestApp;
let smtp: Awaited<ReturnType<typeof startSmtpSink>>;
let chat: Awaited<ReturnType<typeof startHttpServer>>;
let admin: TestUser;
let developer: TestUser;
let viewer: TestUser;
/** Per-path behaviour of the chat receiver: how many times to fail before answering 200, or a fixed status. */
const flakyFailures = new Map<string, number>();

beforeAll(async () => {
  smtp = await startSmtpSink();
  chat = await startHttpServer((req) => {
    if (req.url.startsWith('/down')) return { status: 503 };
    if (req.url.startsWith('/gone')) return { status: 404 };
    const left = flakyFailures.get(req.url) ?? 0;
    if (left > 0) {
      flakyFailures.set(req.url, left - 1);
      return { status: 500 };
    }
    return { status: 200, body: { ok: true } };
  });
  t = await testApp({
    env: {
      SMTP_HOST: '127.0.0.1',
      SMTP_PORT: String(smtp.port),
      SMTP_FROM: 'Uplift <alerts@uplift.test>',
      CHAT_WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
      CHAT_WEBHOOK_ALLOW_HTTP: 'true',
      NOTIFICATION_MAX_ATTEMPTS: '3',
      NOTIFICATION_RETRY_BASE_MS: '0',
    },
  });
  [admin, developer, viewer] = await Promise.all([t.user({ role: 'ADMIN' }), t.user({ role: 'DEVELOPER' }), t.user({ role: 'VIEWER' })]);
});
afterAll(async () => {
  await t.close();
  await chat.close();
  await smtp.close();
});

const put = (user: TestUser, payload: unknown) =>
  t.inject({ method: 'PUT', url: '/api/v1/notifications/preferences', headers: user.headers, payload: payload as object });
const get = (url: string, user?: TestUser) => t.inject({ method: 'GET', url, headers: user?.headers });
const sendTest = (user: TestUser, channel?: string) =>
  t.inject({ method: 'POST', url: `/api/v1/notifications/test${channel ? `?channel=${channel}` : ''}`, headers: user.headers });
const webhook = (path: string) => `${chat.url}${path}/${t.unique('hook')}`;

describe('preferences', () => {
  it('starts from defaults and saves changes, never returning the webhook URL', async () => {
    const user = await t.user({ role: 'DEVELOPER' });
    const before = await get('/api/v1/notifications/preferences', user);
    expect(before.statusCode).toBe(200);
    expect(before.json()).toEqual({
      user_id: user.id,
      email_enabled: false,
      email_address: null,
      chat_webhook_enabled: false,
      chat_webhook_url: null,
      events: [],
      updated_at: null,
      email_configured: true,
    });
    const url = webhook('/hooks');
    const res = await put(user, { email_enabled: true, chat_webhook_enabled: true, chat_webhook_url: url, events: ['experiment_started', 'srm_detected'] });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ email_enabled: true, chat_webhook_enabled: true, events: ['experiment_started', 'srm_detected'] });
    expect(res.json().chat_webhook_url).toBe(`${new URL(chat.url).origin}/…`);
    expect(res.body).not.toContain('/hooks/');
    const partial = await put(user, { email_enabled: false });
    expect(partial.json()).toMatchObject({ email_enabled: false, chat_webhook_enabled: true, events: ['experiment_started', 'srm_detected'] });
    const audit = await get(`/api/v1/audit-logs/?actor_id=${user.id}&action=notification_preferences_update`, admin);
    expect(audit.json().total).toBe(2);
    expect(JSON.stringify(audit.json())).not.toContain('/hooks/');
  });

  it('refuses an enabled chat channel without URL, a URL off the allowed hosts and unknown fields, changing nothing', async () => {
    const user = await t.user({ role: 'VIEWER' });
    const cases: Array<[unknown, unknown[], string]> = [
      [{ chat_webhook_enabled: true }, ['body', 'chat_webhook_url'], WEBHOOK_URL_REQUIRED],
      [{ chat_webhook_url: 'https://internal.example.com/hook' }, ['body', 'chat_webhook_url'], WEBHOOK_URL_NOT_ALLOWED],
      [{ chat_webhook_url: 'ftp://127.0.0.1/hook' }, ['body', 'chat_webhook_url'], WEBHOOK_URL_NOT_ALLOWED],
    ];
    for (const [payload, loc, msg] of cases) {
      const res = await put(user, payload);
      expect(res.statusCode).toBe(422);
      expect(res.json().detail[0]).toMatchObject({ loc, msg });
    }
    const extra = await put(user, { sms_enabled: true });
    expect(extra.statusCode).toBe(422);
    expect(extra.json().detail[0]).toMatchObject({ loc: ['body', 'sms_enabled'], type: 'extra_forbidden' });
    const badKind = await put(user, { events: ['deploy_finished'] });
    expect(badKind.json().detail[0]).toMatchObject({ loc: ['body', 'events', 0], type: 'enum' });
    expect((await get('/api/v1/notifications/preferences', user)).json().updated_at).toBeNull();
    expect((await get('/api/v1/notifications/preferences')).statusCode).toBe(401);
  });

  it('shows every saved preference to ADMIN only', async () => {
    await put(viewer, { events: ['flag_rolled_back'] });
    const res = await get('/api/v1/notifications/admin/preferences?limit=500', admin);
    expect(res.statusCode).toBe(200);
    expect(res.json().items).toEqual(
      expect.arrayContaining([expect.objectContaining({ user_id: viewer.id, username: viewer.username, events: ['flag_rolled_back'] })]),
    );
    expect((await get('/api/v1/notifications/admin/preferences', developer)).statusCode).toBe(403);
    expect((await get('/api/v1/notifications/admin/preferences?limit=0', admin)).statusCode).toBe(422);
  });
});

describe('delivery', () => {
  const log = async (notificationId: string) => {
    const res = await get(`/api/v1/notifications/delivery-log?limit=500&user_id=${developer.id}`, admin);
    expect(res.statusCode).toBe(200);
    return (res.json().items as Array<{ notification_id: string; attempt: number; status: string; error: string | null }>)
      .filter((d) => d.notification_id === notificationId)
      .sort((a, b) => a.attempt - b.attempt);
  };

  it('sends a test email through SMTP and logs the attempt', async () => {
    expect((await put(developer, { email_enabled: true, chat_webhook_enabled: false })).statusCode).toBe(200);
    const res = await sendTest(developer);
    expect(res.statusCode).toBe(200);
    const [result] = res.json().results;
    expect(result).toMatchObject({ channel: 'email', target: developer.email, status: 'sent', attempts: 1, error: null });
    const mail = smtp.messages.find((m) => m.to.includes(developer.email))!;
    expect(mail.from).toBe('alerts@uplift.test');
    expect(mail.data).toContain('Subject: Uplift test notification');
    expect(await log(result.notification_id)).toMatchObject([{ attempt: 1, status: 'sent', error: null }]);
  });

  it('does not retry an address the SMTP server refuses', async () => {
    await put(developer, { email_enabled: true, email_address: `reject-${t.unique()}@example.com` });
    const [result] = (await sendTest(developer, 'email')).json().results;
    expect(result).toMatchObject({ status: 'failed', attempts: 1 });
    expect(result.error).toContain('550');
    await put(developer, { email_address: null });
  });

  it('posts to a chat webhook', async () => {
    const url = webhook('/ok');
    await put(developer, { chat_webhook_enabled: true, chat_webhook_url: url });
    const [result] = (await sendTest(developer, 'chat_webhook')).json().results;
    expect(result).toMatchObject({ channel: 'chat_webhook', status: 'sent', attempts: 1 });
    const received = chat.requests.find((r) => `${chat.url}${r.url}` === url)!;
    expect(received.method).toBe('POST');
    expect(received.headers['content-type']).toContain('application/json');
    expect(JSON.parse(received.body).text).toContain('Uplift test notification');
  });

  it('retries a failing receiver with backoff and logs every attempt', async () => {
    const path = `/flaky/${t.unique()}`;
    flakyFailures.set(path, 1);
    await put(developer, { chat_webhook_enabled: true, chat_webhook_url: `${chat.url}${path}` });
    const [recovered] = (await sendTest(developer, 'chat_webhook')).json().results;
    expect(recovered).toMatchObject({ status: 'sent', attempts: 2 });
    expect(await log(recovered.notification_id)).toMatchObject([
      { attempt: 1, status: 'failed', error: 'The chat webhook answered HTTP 500' },
      { attempt: 2, status: 'sent', error: null },
    ]);

    await put(developer, { chat_webhook_url: webhook('/down') });
    const [failed] = (await sendTest(developer, 'chat_webhook')).json().results;
    expect(failed).toMatchObject({ status: 'failed', attempts: 3, error: 'The chat webhook answered HTTP 503' });
    expect((await log(failed.notification_id)).map((d) => d.status)).toEqual(['failed', 'failed', 'failed']);

    await put(developer, { chat_webhook_url: webhook('/gone') });
    const [gone] = (await sendTest(developer, 'chat_webhook')).json().results;
    expect(gone).toMatchObject({ status: 'failed', attempts: 1, error: 'The chat webhook answered HTTP 404' });
  });

  it('reports an unreachable receiver as a failed delivery', async () => {
    const closed = await startHttpServer(() => ({ status: 200 }));
    await closed.close();
    await put(developer, { chat_webhook_enabled: true, chat_webhook_url: `${closed.url}/hook` });
    const [result] = (await sendTest(developer, 'chat_webhook')).json().results;
    expect(result).toMatchObject({ status: 'failed', attempts: 3, error: 'Could not connect to the chat webhook' });
  });

  it('refuses a test without an enabled channel, and to VIEWER', async () => {
    const user = await t.user({ role: 'DEVELOPER' });
    const none = await sendTest(user);
    expect(none.statusCode).toBe(400);
    expect(none.json()).toEqual({ detail: NO_CHANNEL_ENABLED });
    await put(user, { email_enabled: true });
    expect((await sendTest(user, 'chat_webhook')).json()).toEqual({ detail: CHANNEL_NOT_ENABLED });
    expect((await sendTest(viewer)).statusCode).toBe(403);
    expect((await sendTest(user, 'sms')).statusCode).toBe(422);
    expect((await t.inject({ method: 'POST', url: '/api/v1/notifications/test' })).statusCode).toBe(401);
  });

  it('gives the delivery log to ADMIN only, with filters', async () => {
    const res = await get(`/api/v1/notifications/delivery-log?status=failed&channel=chat_webhook&kind=test&user_id=${developer.id}`, admin);
    expect(res.statusCode).toBe(200);
    expect(res.json().items.length).toBeGreaterThan(0);
    expect(res.json().items.every((d: { status: string; channel: string }) => d.status === 'failed' && d.channel === 'chat_webhook')).toBe(true);
    expect(JSON.stringify(res.json())).not.toContain('/down/');
    expect((await get('/api/v1/notifications/delivery-log', developer)).statusCode).toBe(403);
    expect((await get('/api/v1/notifications/delivery-log?status=lost', admin)).statusCode).toBe(422);
    expect((await get('/api/v1/notifications/delivery-log')).statusCode).toBe(401);
  });
});

describe('notify', () => {
  it('alerts the active accounts subscribed to the event kind on their enabled channels', async () => {
    const subscriber = await t.user({ role: 'ANALYST' });
    const unsubscribed = await t.user({ role: 'ANALYST' });
    const inactive = await t.user({ role: 'ANALYST' });
    const url = webhook('/srm');
    await put(subscriber, { email_enabled: true, chat_webhook_enabled: true, chat_webhook_url: url, events: ['srm_detected'] });
    await put(unsubscribed, { email_enabled: true, events: ['experiment_completed'] });
    await put(inactive, { email_enabled: true, events: ['srm_detected'] });
    await t.database.exec(`UPDATE users SET is_active = false WHERE id = '${inactive.id}'`);
    const name = t.unique('Checkout');
    const outcomes = await t.services.notifications.notify('srm_detected', {
      experiment_id: crypto.randomUUID(),
      experiment_name: name,
      p_value: 0.0004,
    });
    const mine = outcomes.filter((o) => o.target === subscriber.email || o.channel === 'chat_webhook');
    expect(mine.every((o) => o.status === 'sent')).toBe(true);
    const mail = smtp.messages.find((m) => m.to.includes(subscriber.email))!;
    expect(mail.data).toContain(`Subject: Sample ratio mismatch: ${name}`);
    expect(JSON.parse(chat.requests.find((r) => `${chat.url}${r.url}` === url)!.body).text).toContain(name);
    expect(smtp.messages.some((m) => m.to.includes(unsubscribed.email) || m.to.includes(inactive.email))).toBe(false);
  });

  it('alerts subscribers when an experiment starts and completes, and when a flag is rolled back', async () => {
    const subscriber = await t.user({ role: 'ANALYST' });
    const url = webhook('/lifecycle');
    await put(subscriber, { chat_webhook_enabled: true, chat_webhook_url: url, events: ['experiment_started', 'experiment_completed', 'flag_rolled_back'] });
    const e = await experiment(t, developer);
    await t.inject({ method: 'POST', url: `/api/v1/experiments/${e.id}/complete`, headers: developer.headers });
    const root = await t.user({ superuser: true });
    const flag = await t.inject({ method: 'POST', url: '/api/v1/feature-flags/', headers: developer.headers, payload: { key: t.unique('flag'), name: 'Flag', is_active: true, rollout_percentage: 100 } });
    expect(flag.statusCode).toBe(201);
    const rollback = await t.inject({ method: 'POST', url: `/api/v1/safety/feature-flags/${flag.json().id}/rollback?percentage=0&reason=errors`, headers: root.headers });
    expect(rollback.statusCode).toBe(200);
    const texts = async () => chat.requests.filter((r) => `${chat.url}${r.url}` === url).map((r) => JSON.parse(r.body).text as string);
    await t.services.notifications.drain();
    const received = await texts();
    expect(received).toHaveLength(3);
    expect(received.filter((text) => text.includes(e.key) || text.includes('Experiment'))).toHaveLength(2);
    expect(received.some((text) => text.includes(flag.json().key))).toBe(true);
  });

  it('alerts a sample-ratio mismatch found by the results engine, once', async () => {
    const subscriber = await t.user({ role: 'ANALYST' });
    const url = webhook('/srm-live');
    await put(subscriber, { chat_webhook_enabled: true, chat_webhook_url: url, events: ['srm_detected'] });
    const e = await experiment(t, developer);
    const control = e.variants.find((v) => v.is_control)!;
    // A state the API cannot reach: a 50/50 experiment whose assignments all went to the control.
    await t.database.exec(`INSERT INTO assignments (id, experiment_id, variant_id, user_id, created_at)
      SELECT gen_random_uuid(), '${e.id}', '${control.id}', 'srm-' || g, now() FROM generate_series(1, 200) g`);
    const results = await t.inject({ method: 'GET', url: `/api/v1/results/${e.id}?use_cache=false`, headers: developer.headers });
    expect(results.json().srm.warning).toBe(true);
    // The results-rollup job evaluates every rollup and alerts once; reads alert nobody.
    await t.services.results.refreshActive();
    await t.services.results.refreshActive();
    const received = () => chat.requests.filter((r) => `${chat.url}${r.url}` === url && r.body.includes(`Experiment ${e.key}`));
    await t.services.notifications.drain();
    expect(received()).toHaveLength(1);
    expect(JSON.parse(received()[0].body).text).toContain(`Experiment ${e.key}`);
  });
});
