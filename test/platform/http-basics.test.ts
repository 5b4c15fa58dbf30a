import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installErrorHandling } from '../../src/platform/error-handler.js';
import { BAD_URL, PATH_PARAMETER_TOO_LONG } from '../../src/platform/errors.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

let t: TestApp;
let su: TestUser;
beforeAll(async () => {
  t = await testApp();
  su = await t.user({ superuser: true });
});
afterAll(() => t.close());

describe('service basics', () => {
  it('answers an unknown route with 404 Not Found', async () => {
    const res = await t.inject({ method: 'GET', url: '/api/v1/nothing-here' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ detail: 'Not Found' });
  });

  it('answers the removed operations with 404', async () => {
    expect((await t.inject({ method: 'GET', url: '/api/v1/edge/bootstrap' })).statusCode).toBe(404);
    expect((await t.inject({ method: 'POST', url: '/api/v1/etl/query', payload: {} })).statusCode).toBe(404);
  });

  it('routes path parameters as long as the schemas allow; beyond the router limit, or undecodable, {detail} without the path', async () => {
    const long = 'x'.repeat(255);
    const experiment = await t.inject({ method: 'GET', url: `/api/v1/experiments/${long}`, headers: su.headers });
    expect(experiment.statusCode).toBe(422);
    expect(experiment.json().detail[0]).toMatchObject({ loc: ['path', 'experiment_id'] });
    const segmentBy = await t.inject({ method: 'GET', url: `/api/v1/results/${randomUUID()}/segments/${'s'.repeat(200)}`, headers: su.headers });
    expect(segmentBy.statusCode).toBe(404);
    const tooLong = await t.inject({ method: 'GET', url: `/api/v1/experiments/${'y'.repeat(5000)}`, headers: su.headers });
    expect([tooLong.statusCode, tooLong.json()]).toEqual([414, { detail: PATH_PARAMETER_TOO_LONG }]);
    const badUrl = await t.inject({ method: 'GET', url: '/api/v1/experiments/zz%E0%A4%A', headers: su.headers });
    expect([badUrl.statusCode, badUrl.json()]).toEqual([400, { detail: BAD_URL }]);
    expect(tooLong.body + badUrl.body).not.toMatch(/yyy|zz/);
  });

  it('redirects the other trailing-slash spelling with 307, keeping the query', async () => {
    const res = await t.inject({ method: 'GET', url: '/api/v1/admin/users/?limit=5', headers: su.headers });
    expect(res.statusCode).toBe(307);
    expect(res.headers.location).toBe('/api/v1/admin/users?limit=5');
  });
});

describe('error model', () => {
  it('answers unparseable JSON with 400 and the fixed sentence', async () => {
    const res = await t.inject({
      method: 'POST', url: '/api/v1/api-keys', headers: { ...su.headers, 'content-type': 'application/json' }, payload: '{"name": ',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ detail: 'There was an error parsing the body' });
  });

  it('answers a body nested too deep to parse with 400', async () => {
    const payload = `${'['.repeat(2000)}${']'.repeat(2000)}`;
    const res = await t.inject({ method: 'POST', url: '/api/v1/api-keys', headers: { ...su.headers, 'content-type': 'application/json' }, payload });
    expect(res.statusCode).toBe(400);
  });

  it('refuses prototype-poisoning keys as unparseable', async () => {
    const res = await t.inject({
      method: 'POST', url: '/api/v1/api-keys', headers: { ...su.headers, 'content-type': 'application/json' },
      payload: '{"name":"x","__proto__":{"admin":true}}',
    });
    expect(res.statusCode).toBe(400);
  });

  it('reports a missing body as a 422 missing item at body', async () => {
    const res = await t.inject({ method: 'POST', url: '/api/v1/api-keys', headers: su.headers });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toEqual({ detail: [{ type: 'missing', loc: ['body'], msg: 'Field required' }] });
  });

  it('lists every body problem FastAPI-style without repeating the values sent', async () => {
    const res = await t.inject({
      method: 'POST', url: '/api/v1/users/', headers: su.headers,
      payload: { username: 'SECRET-VALUE-1', email: 'SECRET-VALUE-2', password: 12345, extra_field: 'SECRET-VALUE-3' },
    });
    expect(res.statusCode).toBe(422);
    const detail = res.json().detail;
    expect(detail).toEqual(expect.arrayContaining([
      { type: 'extra_forbidden', loc: ['body', 'extra_field'], msg: 'Extra inputs are not permitted' },
      { type: 'value_error', loc: ['body', 'email'], msg: 'value is not a valid email address' },
      { type: 'string_type', loc: ['body', 'password'], msg: 'Input should be a valid string' },
    ]));
    expect(res.body).not.toContain('SECRET-VALUE');
  });

  it('reports query and path problems at query.<name> and path.<name> with ctx', async () => {
    const q = await t.inject({ method: 'GET', url: '/api/v1/users/?skip=-1&limit=abc', headers: su.headers });
    expect(q.statusCode).toBe(422);
    expect(q.json().detail).toEqual(expect.arrayContaining([
      { type: 'greater_than_equal', loc: ['query', 'skip'], msg: 'Input should be greater than or equal to 0', ctx: { ge: 0 } },
      { type: 'int_parsing', loc: ['query', 'limit'], msg: 'Input should be a valid integer' },
    ]));
    const over = await t.inject({ method: 'GET', url: '/api/v1/users/?limit=101', headers: su.headers });
    expect(over.json().detail).toEqual([
      { type: 'less_than_equal', loc: ['query', 'limit'], msg: 'Input should be less than or equal to 100', ctx: { le: 100 } },
    ]);
    const p = await t.inject({ method: 'GET', url: '/api/v1/users/not-a-uuid', headers: su.headers });
    expect(p.statusCode).toBe(422);
    expect(p.json().detail).toEqual([{ type: 'uuid_parsing', loc: ['path', 'user_id'], msg: 'Input should be a valid UUID' }]);
  });

  it('refuses explicit nulls for non-nullable fields', async () => {
    const res = await t.inject({
      method: 'PUT', url: `/api/v1/users/${su.id}`, headers: su.headers,
      payload: { username: su.username, email: su.email, is_superuser: null },
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toEqual([{ type: 'null_not_allowed', loc: ['body', 'is_superuser'], msg: 'Field may not be null' }]);
  });

  it('answers 413 for a body above 5 MiB with Content-Length', async () => {
    const payload = JSON.stringify({ name: 'x'.repeat(5 * 1024 * 1024 + 10) });
    const res = await t.inject({ method: 'POST', url: '/api/v1/api-keys', headers: { ...su.headers, 'content-type': 'application/json' }, payload });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({ detail: 'Request body too large' });
  });

  it('answers 413 for a chunked body above 5 MiB without Content-Length', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    const status = await new Promise<{ code: number; body: string }>((resolve, reject) => {
      const req = httpRequest(
        { host: '127.0.0.1', port, method: 'POST', path: '/api/v1/api-keys', headers: { ...su.headers, 'content-type': 'application/json', 'transfer-encoding': 'chunked' } },
        (res) => {
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () => resolve({ code: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', (error) => ((error as NodeJS.ErrnoException).code === 'EPIPE' || (error as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(error)));
      const chunk = 'x'.repeat(256 * 1024);
      req.write('{"name":"');
      let written = 0;
      const pump = () => {
        while (written < 6 * 1024 * 1024) {
          written += chunk.length;
          if (!req.write(chunk)) return req.once('drain', pump);
        }
        req.end('"}');
      };
      pump();
    });
    expect(status.code).toBe(413);
    expect(JSON.parse(status.body)).toEqual({ detail: 'Request body too large' });
  });

  it('answers an unexpected failure with 500 carrying the request id, also logged, and no stack', async () => {
    const lines: string[] = [];
    const app = Fastify({ logger: { level: 'error', stream: new Writable({ write(c, _e, cb) { lines.push(String(c)); cb(); } }) } });
    installErrorHandling(app);
    app.get('/boom', async () => {
      throw new Error('database exploded at /secret/path');
    });
    const res = await app.inject({ method: 'GET', url: '/boom' });
    expect(res.statusCode).toBe(500);
    const body = res.json();
    expect(body.detail).toBe('Internal Server Error');
    expect(typeof body.request_id).toBe('string');
    expect(res.body).not.toContain('exploded');
    expect(lines.join('')).toContain(body.request_id);
    await app.close();
  });
});

describe('documentation routes', () => {
  it('serves an OpenAPI 3.1 document describing every route with schemas and security', async () => {
    const res = await t.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    const operations = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ path, method, op })),
    );
    expect(operations.length).toBeGreaterThan(10);
    const ids = new Set<string>();
    for (const { path, method, op } of operations) {
      expect(op.operationId, `${method} ${path}`).toBeTruthy();
      expect(ids.has(op.operationId)).toBe(false);
      ids.add(op.operationId);
      expect(Object.keys(op.responses ?? {}).length, `${method} ${path}`).toBeGreaterThan(0);
      if (op.requestBody) {
        const content = Object.values(op.requestBody.content ?? {}) as Array<{ schema?: unknown }>;
        expect(content.length, `${method} ${path}`).toBeGreaterThan(0);
        for (const media of content) expect(media.schema, `${method} ${path}`).toBeTruthy();
      }
    }
    expect(doc.paths['/api/v1/users/me'].get.security).toEqual([{ bearer: [] }]);
    expect(doc.paths['/api/v1/auth/login'].post.security).toEqual([]);
    expect(doc.paths['/api/v1/admin/users']).toBeDefined();
    expect(doc.paths['/api/v1/users/'].post.requestBody.content['application/json'].schema).toBeTruthy();
  });

  it('serves Swagger UI and ReDoc from local assets, without a CDN', async () => {
    const docs = await t.inject({ method: 'GET', url: '/api/v1/docs/' });
    expect(docs.statusCode).toBe(200);
    expect(docs.body).toContain('swagger-ui');
    const bundle = await t.inject({ method: 'GET', url: '/api/v1/docs/static/swagger-ui-bundle.js' });
    expect(bundle.statusCode).toBe(200);
    const redoc = await t.inject({ method: 'GET', url: '/api/v1/redoc' });
    expect(redoc.statusCode).toBe(200);
    expect(redoc.body).toContain('/api/v1/redoc/redoc.standalone.js');
    expect(redoc.body).toContain('/api/v1/openapi.json');
    expect(redoc.body).not.toMatch(/https?:\/\//);
    const script = await t.inject({ method: 'GET', url: '/api/v1/redoc/redoc.standalone.js' });
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toContain('javascript');
  });
});

describe('deployment profiles over HTTP', () => {
  it('core answers 404 on every module route, 501 for split URL, and still serves core routes', async () => {
    const core = await t.spawn({ DEPLOYMENT_PROFILE: 'core' });
    const admin = await t.user({ superuser: true });
    const moduleRoutes = [
      '/api/v1/rbac/roles', '/api/v1/export/experiments', '/api/v1/export/reports/overview', '/api/v1/integrations',
      '/api/v1/workspaces/', '/api/v1/compliance/reports/soc2', '/api/v1/compliance/export',
    ];
    for (const url of moduleRoutes) {
      expect((await core.app.inject({ method: 'GET', url, headers: admin.headers })).statusCode, url).toBe(404);
      expect((await t.inject({ method: 'GET', url, headers: admin.headers })).statusCode, url).not.toBe(404);
    }
    expect((await core.app.inject({ method: 'GET', url: '/api/v1/compliance/audit-events', headers: admin.headers })).statusCode).toBe(200);
    const created = await core.app.inject({
      method: 'POST', url: '/api/v1/experiments/', headers: admin.headers,
      payload: {
        name: 'Split', key: t.unique('split'), experiment_type: 'split_url',
        variants: [{ name: 'control', is_control: true, traffic_allocation: 100 }], metrics: [{ name: 'm', event_name: 'e' }],
      },
    });
    expect(created.statusCode).toBe(501);
    const preview = await core.app.inject({
      method: 'GET', url: '/api/v1/experiments/00000000-0000-4000-8000-000000000001/split-url/preview?user_id=u', headers: admin.headers,
    });
    expect(preview.statusCode).toBe(501);
  });
});
