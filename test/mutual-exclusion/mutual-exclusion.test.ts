import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/platform/clock.js';
import { isInHoldout } from '../../src/modules/holdout/membership.js';
import { mutexSlot, type ExclusionGroup } from '../../src/modules/mutual-exclusion/membership.js';
import {
  ALLOCATION_NOT_MEMBER,
  ALLOCATION_TOO_LARGE,
  GROUP_ARCHIVED,
  GROUP_NOT_FOUND,
  IN_ANOTHER_GROUP,
  NOT_A_MEMBER,
  experimentNotJoinable,
} from '../../src/modules/mutual-exclusion/service.js';
import { singleVariantBody } from '../helpers/fixtures.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

const clock = fixedClock(new Date('2031-09-01T10:00:00.000Z'));
let t: TestApp;
let admin: TestUser;
let dev: TestUser;
let analyst: TestUser;
let viewer: TestUser;

beforeAll(async () => {
  t = await testApp({ clock });
  [admin, dev, analyst, viewer] = await t.users('ADMIN', 'DEVELOPER', 'ANALYST', 'VIEWER');
});
afterAll(() => t.close());

type Json = Record<string, any>;
const call: TestApp['call'] = (...args) => t.call(...args);

const experimentBody = () => singleVariantBody(t);
async function experiment(): Promise<Json> {
  const res = await call('POST', '/api/v1/experiments/', dev, experimentBody());
  expect(res.statusCode).toBe(201);
  return res.json();
}

const GROUPS = '/api/v1/mutual-exclusion-groups';
const issue = (loc: unknown[], msg: string) => ({ detail: [{ type: 'value_error', loc, msg }] });

describe('mutual exclusion groups', () => {
  it('creates a group with experiments and an allocation for DEVELOPER and up', async () => {
    const [a, b] = [await experiment(), await experiment()];
    const res = await call('POST', GROUPS, dev, {
      name: 'Checkout tests',
      experiment_ids: [a.id, b.id],
      traffic_allocation: { [a.id]: 30, [b.id.toUpperCase()]: 70 },
    });
    expect(res.statusCode).toBe(201);
    const group = res.json();
    expect(group).toMatchObject({
      name: 'Checkout tests',
      description: null,
      status: 'active',
      traffic_allocation: { [a.id]: 30, [b.id]: 70 },
      experiments: [
        { id: a.id, key: a.key, name: a.name, status: 'draft' },
        { id: b.id, key: b.key, name: b.name, status: 'draft' },
      ],
    });
    expect((await call('GET', `${GROUPS}/${group.id}`, viewer)).json()).toEqual(group);
    expect((await call('GET', `${GROUPS}?status=active`, viewer)).json()).toContainEqual(group);
    const assignable = await t.services.experimentsReadModel.findAssignable(a.key);
    expect(assignable?.mutualExclusionGroup).toEqual({ id: group.id, experimentIds: [a.id, b.id], trafficAllocation: { [a.id]: 30, [b.id]: 70 } });
  });

  it('answers 401, 403, 404 and 422, and creates nothing when refused', async () => {
    const e = await experiment();
    for (const user of [analyst, viewer]) expect((await call('POST', GROUPS, user, { name: 'x' })).statusCode).toBe(403);
    expect((await call('POST', GROUPS, undefined, { name: 'x' })).statusCode).toBe(401);
    expect((await call('GET', GROUPS)).statusCode).toBe(401);
    expect((await call('GET', `${GROUPS}/00000000-0000-4000-8000-000000000000`, viewer)).json()).toEqual({ detail: GROUP_NOT_FOUND });
    expect((await call('GET', `${GROUPS}/abc`, viewer)).statusCode).toBe(422);
    expect((await call('POST', GROUPS, dev, { description: 'no name' })).statusCode).toBe(422);
    const over = await call('POST', GROUPS, dev, { name: 'over', experiment_ids: [e.id], traffic_allocation: { [e.id]: 100.5 } });
    expect(over.json().detail).toEqual([expect.objectContaining({ type: 'less_than_equal' })]);
    const stranger = await call('POST', GROUPS, dev, { name: 'stranger', traffic_allocation: { [e.id]: 50 } });
    expect(stranger.json()).toEqual(issue(['body', 'traffic_allocation'], ALLOCATION_NOT_MEMBER));
    const e2 = await experiment();
    const sum = await call('POST', GROUPS, dev, { name: 'sum', experiment_ids: [e.id, e2.id], traffic_allocation: { [e.id]: 60, [e2.id]: 50 } });
    expect(sum.json()).toEqual(issue(['body', 'traffic_allocation'], ALLOCATION_TOO_LARGE));
    const unknown = await call('POST', GROUPS, dev, { name: 'unknown', experiment_ids: ['00000000-0000-4000-8000-000000000000'] });
    expect(unknown.statusCode).toBe(404);
    const names = (await call('GET', GROUPS, viewer)).json().map((g: Json) => g.name);
    for (const name of ['x', 'over', 'stranger', 'sum', 'unknown']) expect(names).not.toContain(name);
  });

  it('keeps an experiment in at most one active group', async () => {
    const e = await experiment();
    const first = (await call('POST', GROUPS, dev, { name: 'first', experiment_ids: [e.id] })).json();
    const second = await call('POST', GROUPS, dev, { name: 'second', experiment_ids: [e.id] });
    expect(second.statusCode).toBe(409);
    expect(second.json()).toEqual({ detail: IN_ANOTHER_GROUP });
    const other = (await call('POST', GROUPS, dev, { name: 'other' })).json();
    const add = await call('POST', `${GROUPS}/${other.id}/experiments`, dev, { experiment_id: e.id });
    expect(add.statusCode).toBe(409);
    expect((await call('GET', `${GROUPS}/${other.id}`, viewer)).json().experiments).toEqual([]);

    // An inactive group may hold it; activating that group is then refused until the first lets go.
    expect((await call('PUT', `${GROUPS}/${other.id}`, admin, { status: 'inactive' })).json().status).toBe('inactive');
    expect((await call('POST', `${GROUPS}/${other.id}/experiments`, dev, { experiment_id: e.id })).statusCode).toBe(200);
    const reactivate = await call('PUT', `${GROUPS}/${other.id}`, admin, { status: 'active' });
    expect(reactivate.statusCode).toBe(409);
    expect(reactivate.json()).toEqual({ detail: IN_ANOTHER_GROUP });
    expect((await call('DELETE', `${GROUPS}/${first.id}`, admin)).statusCode).toBe(204);
    expect((await call('PUT', `${GROUPS}/${other.id}`, admin, { status: 'active' })).json().status).toBe('active');
    expect((await t.services.experimentsReadModel.findAssignable(e.key))?.mutualExclusionGroup?.id).toBe(other.id);
  });

  it('lets DEVELOPER edit but only ADMIN change the status or archive', async () => {
    const [a, b] = [await experiment(), await experiment()];
    const group = (await call('POST', GROUPS, dev, { name: 'edit me', experiment_ids: [a.id, b.id] })).json();
    const edited = await call('PUT', `${GROUPS}/${group.id}`, dev, { name: 'edited', description: 'd', traffic_allocation: { [a.id]: 50, [b.id]: 50 }, status: 'active' });
    expect(edited.json()).toMatchObject({ name: 'edited', description: 'd', traffic_allocation: { [a.id]: 50, [b.id]: 50 } });
    const status = await call('PUT', `${GROUPS}/${group.id}`, dev, { status: 'inactive' });
    expect(status.statusCode).toBe(403);
    for (const user of [analyst, viewer]) expect((await call('PUT', `${GROUPS}/${group.id}`, user, { name: 'x' })).statusCode).toBe(403);
    expect((await call('DELETE', `${GROUPS}/${group.id}`, dev)).statusCode).toBe(403);
    expect((await call('GET', `${GROUPS}/${group.id}`, viewer)).json()).toMatchObject({ name: 'edited', status: 'active' });
    const superuser = await t.user({ superuser: true });
    expect((await call('DELETE', `${GROUPS}/${group.id}`, superuser)).statusCode).toBe(204);
    expect((await call('GET', `${GROUPS}/${group.id}`, viewer)).json().status).toBe('archived');
    expect((await call('DELETE', `${GROUPS}/00000000-0000-4000-8000-000000000000`, admin)).statusCode).toBe(404);
    const frozen = await call('POST', `${GROUPS}/${group.id}/experiments`, dev, { experiment_id: (await experiment()).id });
    expect(frozen.json()).toEqual({ detail: GROUP_ARCHIVED });
    expect(await t.services.experimentsReadModel.findAssignable(a.key)).toMatchObject({ mutualExclusionGroup: null });
  });

  it('adds and removes experiments; removing drops its share of the allocation', async () => {
    const [a, b] = [await experiment(), await experiment()];
    const group = (await call('POST', GROUPS, dev, { name: 'members', experiment_ids: [a.id], traffic_allocation: { [a.id]: 40 } })).json();
    const added = await call('POST', `${GROUPS}/${group.id}/experiments`, dev, { experiment_id: b.id });
    expect(added.json().experiments.map((e: Json) => e.id)).toEqual([a.id, b.id]);
    expect((await call('POST', `${GROUPS}/${group.id}/experiments`, dev, { experiment_id: b.id })).json().experiments).toHaveLength(2);
    const removed = await call('DELETE', `${GROUPS}/${group.id}/experiments/${a.id}`, dev);
    expect(removed.json()).toMatchObject({ traffic_allocation: {}, experiments: [{ id: b.id }] });
    const again = await call('DELETE', `${GROUPS}/${group.id}/experiments/${a.id}`, dev);
    expect(again.statusCode).toBe(404);
    expect(again.json()).toEqual({ detail: NOT_A_MEMBER });
    expect((await call('POST', `${GROUPS}/${group.id}/experiments`, viewer, { experiment_id: a.id })).statusCode).toBe(403);
    expect((await call('DELETE', `${GROUPS}/${group.id}/experiments/${b.id}`, analyst)).statusCode).toBe(403);
    expect((await call('POST', `${GROUPS}/${group.id}/experiments`, dev, { experiment_id: 'x' })).statusCode).toBe(422);
    expect((await call('POST', `${GROUPS}/${group.id}/experiments`, dev, { experiment_id: '00000000-0000-4000-8000-000000000000' })).statusCode).toBe(404);

    const done = await experiment();
    await call('POST', `/api/v1/experiments/${done.id}/archive`, dev);
    const finished = await call('POST', `${GROUPS}/${group.id}/experiments`, dev, { experiment_id: done.id });
    expect(finished.statusCode).toBe(409);
    expect(finished.json()).toEqual({ detail: experimentNotJoinable('archived') });
  });
});

describe('membership functions', () => {
  const group = (ids: string[], trafficAllocation: Record<string, number> | null = null): ExclusionGroup => ({
    id: 'g-1',
    experimentIds: ids,
    trafficAllocation,
  });

  it('gives every user exactly one member, deterministically, when no allocation is set', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.uuid(), { minLength: 1, maxLength: 8 }), fc.string(), (ids, user) => {
        const slot = mutexSlot(group(ids), user);
        expect(ids).toContain(slot);
        expect(mutexSlot(group(ids), user)).toBe(slot);
      }),
    );
    expect(mutexSlot(group([]), 'u')).toBeNull();
  });

  it('follows the allocation: a member without a share never gets users, shares under 100 leave some out', () => {
    fc.assert(
      fc.property(fc.string(), (user) => {
        expect(mutexSlot(group(['a', 'b'], { a: 100 }), user)).toBe('a');
        expect(mutexSlot(group(['a', 'b'], { a: 0, b: 0 }), user)).toBeNull();
      }),
    );
    const counts = { a: 0, b: 0, none: 0 };
    for (let i = 0; i < 20_000; i++) counts[(mutexSlot(group(['a', 'b'], { a: 20, b: 30 }), `user-${i}`) ?? 'none') as 'a']++;
    expect(counts.a / 20_000).toBeCloseTo(0.2, 1);
    expect(counts.b / 20_000).toBeCloseTo(0.3, 1);
    expect(counts.none / 20_000).toBeCloseTo(0.5, 1);
  });

  it('keeps holdout membership deterministic and monotone in the percentage', () => {
    fc.assert(
      fc.property(fc.uuid(), fc.string(), fc.double({ min: 0, max: 100, noNaN: true }), fc.double({ min: 0, max: 100, noNaN: true }), (id, user, p, q) => {
        const [low, high] = p <= q ? [p, q] : [q, p];
        if (isInHoldout({ id, percentage: low }, user)) expect(isInHoldout({ id, percentage: high }, user)).toBe(true);
        expect(isInHoldout({ id, percentage: 0 }, user)).toBe(false);
        expect(isInHoldout({ id, percentage: 100 }, user)).toBe(true);
      }),
    );
  });
});

