import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/test-app.js';

// A dashboard build of our own, so the test does not depend on web/dist being present.
const dist = mkdtempSync(join(tmpdir(), 'uplift-web-'));
mkdirSync(join(dist, 'assets'));
writeFileSync(join(dist, 'index.html'), '<!doctype html><title>Uplift</title><div id="root"></div>');
writeFileSync(join(dist, 'assets', 'index-AbC123.js'), 'console.log(1)');

let t: TestApp;
beforeAll(async () => {
  t = await testApp({ env: { WEB_DIST_DIR: dist } });
});
afterAll(() => t.close());

const html = { accept: 'text/html,application/xhtml+xml' };

describe('the dashboard served at /', () => {
  it('serves index.html at / with no-cache, a content security policy and an ETag that revalidates', async () => {
    const res = await t.inject({ method: 'GET', url: '/', headers: html });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers['content-security-policy']).toContain("default-src 'self'");
    expect(res.body).toContain('<div id="root">');
    const again = await t.inject({ method: 'GET', url: '/', headers: { ...html, 'if-none-match': res.headers.etag as string } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
  });

  it('serves hashed assets as immutable for a year', async () => {
    const res = await t.inject({ method: 'GET', url: '/assets/index-AbC123.js' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(res.body).toBe('console.log(1)');
  });

  it('answers client routes with index.html, but never API, health, missing assets or non-HTML requests', async () => {
    const page = await t.inject({ method: 'GET', url: '/experiments/123?tab=results', headers: html });
    expect(page.statusCode).toBe(200);
    expect(page.headers['cache-control']).toBe('no-cache');
    expect(page.body).toContain('<div id="root">');

    for (const url of ['/api/v1/nothing-here', '/api/v1/docs/nothing', '/health/nothing', '/assets/missing.js', '/favicon.ico']) {
      const res = await t.inject({ method: 'GET', url, headers: html });
      expect(res.statusCode, url).toBe(404);
      expect(res.json(), url).toEqual({ detail: 'Not Found' });
    }
    const json = await t.inject({ method: 'GET', url: '/experiments', headers: { accept: 'application/json' } });
    expect(json.statusCode).toBe(404);
    const post = await t.inject({ method: 'POST', url: '/experiments', headers: html });
    expect(post.statusCode).toBe(404);
  });

  it('leaves the API and the health check as they were', async () => {
    const health = await t.inject({ method: 'GET', url: '/health', headers: html });
    expect(health.statusCode).toBe(200);
    expect(health.headers['content-type']).toContain('application/json');
    const unauthenticated = await t.inject({ method: 'GET', url: '/api/v1/experiments/', headers: html });
    expect(unauthenticated.statusCode).toBe(401);
  });
});

describe('without a built dashboard', () => {
  it('starts the API and answers / with 404', async () => {
    const other = await t.spawn({ WEB_DIST_DIR: join(dist, 'not-built') });
    const root = await other.app.inject({ method: 'GET', url: '/', headers: html });
    expect(root.statusCode).toBe(404);
    const health = await other.app.inject({ method: 'GET', url: '/health' });
    expect(health.statusCode).toBe(200);
  });
});
