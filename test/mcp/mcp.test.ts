import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UpliftApp } from '../../src/app.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

let t: TestApp;
let core: UpliftApp;

beforeAll(async () => {
  t = await testApp();
  core = await t.spawn({ DEPLOYMENT_PROFILE: 'core' });
});
afterAll(() => t.close());

const get = (url: string, user?: TestUser, app = t.app) => app.inject({ method: 'GET', url, headers: user?.headers });

describe('tool manifest', () => {
  it('describes the operations as tools without sign-in', async () => {
    const res = await get('/api/v1/mcp/manifest');
    expect(res.statusCode).toBe(200);
    const manifest = res.json();
    expect(manifest.server).toBeNull();
    const list = manifest.tools.find((tool: { name: string }) => tool.name === 'listAuditLogs');
    expect(list).toMatchObject({ http: { method: 'GET', path: '/api/v1/audit-logs/' }, authentication: 'bearer' });
    expect(list.inputSchema.properties).toHaveProperty('limit');
    const design = manifest.tools.find((tool: { name: string }) => tool.name === 'designExperimentWithAi');
    expect(design.inputSchema.required).toContain('body');
    expect(manifest.tools.some((tool: { name: string }) => tool.name === 'getMcpManifest')).toBe(false);
    const coreTools = (await get('/api/v1/mcp/manifest', undefined, core.app)).json().tools.map((tool: { name: string }) => tool.name);
    expect(coreTools).not.toContain('getSoc2Report');
  });
});
