/**
 * Shared by the tests of flag errors (error-reports, safety, metrics): an app whose tokens outlive a clock moved by
 * hours, users of each role and a superuser, API keys by trust, requests that move the clock, flags made by the API.
 */
import { expect } from 'vitest';
import { fixedClock } from '../../src/platform/clock.js';
import { testApp, type TestApp, type TestUser } from './test-app.js';

export type Json = Record<string, any>;
export type Headers = Record<string, string>;
export const MINUTE = 60_000;

/** The clock of these files: they move it, so each file has its own. */
export const errorsClock = () => fixedClock(new Date('2031-08-01T10:00:00.000Z'));

export type FlagErrorsApp = Awaited<ReturnType<typeof flagErrorsApp>>;

export async function flagErrorsApp(clock: ReturnType<typeof errorsClock>) {
  // The clock moves hours during the file: tokens must outlive it.
  const t: TestApp = await testApp({ clock, env: { ACCESS_TOKEN_EXPIRE_MINUTES: '525600' } });
  const [admin, dev, analyst, viewer, root]: TestUser[] = await Promise.all([
    t.user({ role: 'ADMIN' }), t.user({ role: 'DEVELOPER' }), t.user({ role: 'ANALYST' }), t.user({ role: 'VIEWER' }), t.user({ superuser: true }),
  ]);
  /** Keys by trust: an sdk:ruleset key of a DEVELOPER (counted), a plain key, an sdk:ruleset key of an ANALYST. */
  const [trusted, plain, analystSdk] = (await Promise.all([t.apiKey(dev, ['sdk:ruleset']), t.apiKey(dev), t.apiKey(analyst, ['sdk:ruleset'])])).map((k) => k.headers);

  function call(method: 'GET' | 'POST', url: string, headers: Headers | null, payload?: unknown) {
    // A millisecond per call keeps audit entries in the order they were made.
    clock.advance(1);
    return t.inject({ method, url, ...(headers ? { headers } : {}), ...(payload === undefined ? {} : { payload: payload as Json }) });
  }

  /** A flag made by the DEVELOPER: on, at 50%, unless `body` says otherwise. */
  async function createFlag(body: Json = {}): Promise<Json> {
    const res = await call('POST', '/api/v1/feature-flags/', dev.headers, { key: t.unique('flag'), name: 'Flag', is_active: true, rollout_percentage: 50, ...body });
    if (res.statusCode !== 201) throw new Error(`create flag: ${res.statusCode} ${res.body}`);
    return res.json();
  }

  /** `count` error reports of the flag with these key headers, all stored. */
  async function reportErrors(headers: Headers, flagKey: string, count: number): Promise<void> {
    const reports = Array.from({ length: count }, (_, i) => ({ error_type: 'TypeError', message: `boom ${i}`, feature_flag_key: flagKey }));
    const res = await call('POST', '/api/v1/tracking/errors/batch', headers, { reports });
    expect(res.json()).toMatchObject({ stored: count, failed: 0 });
  }

  return { t, admin, dev, analyst, viewer, root, trusted, plain, analystSdk, call, createFlag, reportErrors };
}
