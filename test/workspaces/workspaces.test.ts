import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UpliftApp } from '../../src/app.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

let t: TestApp;
let core: UpliftApp;
let admin: TestUser;
let viewer: TestUser;

beforeAll(async () => {
  t = await testApp();
  core = await t.spawn({ DEPLOYMENT_PROFILE: 'core' });
  // Four accounts besides the bootstrap ones: the default workspace lists every one of them.
  [admin, viewer] = await Promise.all([t.user({ role: 'ADMIN' }), t.user({ role: 'VIEWER' }), t.user({ role: 'ANALYST' }), t.user({ role: 'DEVELOPER' })]);
});
afterAll(() => t.close());

const get = (url: string, user?: TestUser, app = t.app) => app.inject({ method: 'GET', url, headers: user?.headers });

describe('workspaces', () => {
  it('lists the default workspace with every account as a member (full profile only)', async () => {
    const res = await get('/api/v1/workspaces/', viewer);
    expect(res.statusCode).toBe(200);
    const [workspace] = res.json();
    expect(workspace).toMatchObject({ name: 'Default', slug: 'default', is_default: true });
    expect(workspace.member_count).toBeGreaterThanOrEqual(4);
    await t.user();
    expect((await get('/api/v1/workspaces/', viewer)).json()[0].member_count).toBe(workspace.member_count + 1);
    expect((await get('/api/v1/workspaces/')).statusCode).toBe(401);
    expect((await get('/api/v1/workspaces/', admin, core.app)).statusCode).toBe(404);
  });
});
