import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { UpliftBrowser, type UpliftEvent } from '../src/browser.js';
import { FakeService, json } from './fake-service.js';

let service: FakeService;
let client: UpliftBrowser | undefined;
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  service = new FakeService();
});
afterEach(async () => {
  await client?.close();
  client = undefined;
  vi.useRealTimers();
});

describe('@uplift/sdk/browser', () => {
  it("loads the user's flags from the user route with the context, polls them and reports changes", async () => {
    let flags = { checkout: true, banner: false };
    service.on('GET', '/feature-flags/user/u%201', () => json(200, flags));
    client = new UpliftBrowser({ baseUrl: 'http://uplift.test', apiKey: 'k', userId: 'u 1', attributes: { country: 'US' }, pollSeconds: 10, fetch: service.fetch });
    const seen: UpliftEvent[] = [];
    client.subscribe((e) => seen.push(e));
    await client.ready();
    expect(service.sent[0]).toMatchObject({ path: `/feature-flags/user/u%201?context=${encodeURIComponent('{"country":"US"}')}`, headers: { 'x-api-key': 'k' } });
    expect(client.isEnabled('checkout')).toBe(true);
    expect(client.isEnabled('banner')).toBe(false);
    expect(client.isEnabled('nope')).toBe(false);
    flags = { checkout: true, banner: true };
    await vi.advanceTimersByTimeAsync(10_000);
    expect(client.allEnabled()).toEqual({ checkout: true, banner: true });
    expect(seen.at(-1)).toEqual({ type: 'ruleset', version: undefined, changed: ['banner'] });
  });

  it('answers from a bootstrap at once, switches users with identify, and tracks for the current user', async () => {
    service.on('GET', '/feature-flags/user/anon', () => new Promise(() => undefined));
    service.on('GET', '/feature-flags/user/u2', () => json(200, { checkout: false }));
    service.on('POST', '/tracking/batch', () => json(200, { errors: [] }));
    client = new UpliftBrowser({ baseUrl: 'http://uplift.test', apiKey: 'k', userId: 'anon', bootstrap: { checkout: true }, updates: 'off', fetch: service.fetch });
    await client.ready();
    expect(client.isEnabled('checkout')).toBe(true);
    await client.identify('u2');
    expect(client.isEnabled('checkout')).toBe(false);
    client.track('signup', { value: 1 });
    await client.flush();
    expect(service.sent.at(-1)!.body).toEqual({ events: [{ event_type: 'signup', user_id: 'u2', value: 1 }] });
  });
});
