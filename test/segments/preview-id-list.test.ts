import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_RULES_TO_PREVIEW } from '../../src/modules/segments/service.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

let t: TestApp;
let dev: TestUser;
beforeAll(async () => {
  t = await testApp();
  dev = await t.user({ role: 'DEVELOPER' });
});
afterAll(() => t.close());

const RULES = { logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'country', operator: 'equals', value: 'US' }] }] };

describe('segment preview', () => {
  it('an id list segment is 422 on preview, rules sent in the body or not', async () => {
    const created = await t.inject({ method: 'POST', url: '/api/v1/segments', headers: dev.headers, payload: { name: t.unique('ids'), kind: 'id_list' } });
    expect(created.statusCode).toBe(201);
    for (const payload of [{}, { rules: RULES }]) {
      const res = await t.inject({ method: 'POST', url: `/api/v1/segments/${created.json().id}/preview`, headers: dev.headers, payload });
      expect([res.statusCode, res.json()]).toEqual([422, { detail: [{ type: 'value_error', loc: ['body', 'rules'], msg: NO_RULES_TO_PREVIEW }] }]);
    }
  });
});
