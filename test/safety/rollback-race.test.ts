import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/platform/clock.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

/**
 * Issue 13, defect 3: a rollout stage in flight must never undo a safety rollback. A stage and a rollback take turns
 * on the flag's row lock, and the stage checks its schedule under that lock: once a rollback has paused the
 * schedule, no stage raises the percentage again.
 */
type Json = Record<string, any>;
const clock = fixedClock(new Date('2031-08-01T10:00:00.000Z'));
const SCHEDULES = '/api/v1/rollout-schedules';

let t: TestApp;
let dev: TestUser;
let root: TestUser;

beforeAll(async () => {
  t = await testApp({ clock, env: { ACCESS_TOKEN_EXPIRE_MINUTES: '525600' } });
  [dev, root] = await Promise.all([t.user({ role: 'DEVELOPER' }), t.user({ superuser: true })]);
});
afterAll(() => t.close());

async function post(url: string, user: TestUser, payload?: Json) {
  return t.inject({ method: 'POST', url, headers: user.headers, ...(payload === undefined ? {} : { payload }) });
}
const readFlag = async (id: string) => (await t.inject({ method: 'GET', url: `/api/v1/feature-flags/${id}`, headers: dev.headers })).json();
const readSchedule = async (id: string) => (await t.inject({ method: 'GET', url: `${SCHEDULES}/${id}`, headers: dev.headers })).json();

/** An active flag at 10 % with an active schedule whose next stage (manual) raises it to 50 %. */
async function rampingFlag(): Promise<{ flag: Json; schedule: Json }> {
  const flagRes = await post('/api/v1/feature-flags/', dev, { key: t.unique('flag'), name: 'Flag', is_active: true, rollout_percentage: 10 });
  const flag = flagRes.json();
  const created = await post(`${SCHEDULES}/`, dev, { flag_id: flag.id, name: 'Ramp', stages: [{ percentage: 50 }, { percentage: 100 }] });
  const schedule = (await post(`${SCHEDULES}/${created.json().id}/activate`, dev)).json();
  expect(schedule.status).toBe('active');
  return { flag, schedule };
}

const rollback = (flagId: string) => post(`/api/v1/safety/feature-flags/${flagId}/rollback?percentage=0&reason=race`, root);

/**
 * Runs `during` once, right before the first rollout write of a schedule stage reaches the flags service: the moment
 * a stage has started (and read its schedule) but has not yet changed the flag.
 */
function onStageWrite(during: () => Promise<unknown>): () => void {
  const flags = t.services.flags as unknown as Record<string, (...args: any[]) => Promise<unknown>>;
  const originals = new Map<string, (...args: any[]) => Promise<unknown>>();
  let armed = true;
  // setRollout was the stage's write before the fix (the test failed on it); changeRollout is the write now.
  for (const name of ['setRollout', 'changeRollout']) {
    const original = flags[name];
    if (typeof original !== 'function') continue;
    originals.set(name, original);
    flags[name] = async (...args: any[]) => {
      const isStage = args.some((a) => a && typeof a === 'object' && 'rollout_stage_id' in a);
      if (armed && isStage) {
        armed = false;
        await during();
      }
      return original.apply(flags, args);
    };
  }
  return () => {
    for (const [name, original] of originals) flags[name] = original;
  };
}

describe('a stage in flight and a safety rollback', () => {
  it('never raises the rollout after a rollback that lands while the stage is being applied', async () => {
    const { flag, schedule } = await rampingFlag();
    let rolledBack: Json | undefined;
    const restore = onStageWrite(async () => {
      rolledBack = (await rollback(flag.id)).json();
    });
    let advance;
    try {
      advance = await post(`${SCHEDULES}/stages/${schedule.stages[0].id}/advance`, dev);
    } finally {
      restore();
    }
    expect(rolledBack).toMatchObject({ rollout_percentage: 0, is_active: false, paused_schedule_ids: [schedule.id] });
    expect(advance.statusCode).toBe(409);
    expect(await readFlag(flag.id)).toMatchObject({ rollout_percentage: 0, is_active: false });
    const after = await readSchedule(schedule.id);
    expect(after.status).toBe('paused');
    expect(after.stages[0]).toMatchObject({ status: 'pending', applied_at: null });
  });

  it('never raises the rollout when the scheduler applies a due stage while a rollback lands', async () => {
    const flagRes = await post('/api/v1/feature-flags/', dev, { key: t.unique('flag'), name: 'Flag', is_active: true, rollout_percentage: 10 });
    const flag = flagRes.json();
    const at = new Date(clock.now().getTime() + 60_000).toISOString();
    const created = await post(`${SCHEDULES}/`, dev, { flag_id: flag.id, name: 'Ramp', stages: [{ percentage: 60, scheduled_at: at }, { percentage: 100 }] });
    const schedule = (await post(`${SCHEDULES}/${created.json().id}/activate`, dev)).json();
    clock.advance(120_000);
    const restore = onStageWrite(() => rollback(flag.id));
    try {
      await t.services.rolloutSchedules.runDue(clock.now());
    } finally {
      restore();
    }
    expect(await readFlag(flag.id)).toMatchObject({ rollout_percentage: 0, is_active: false });
    expect((await readSchedule(schedule.id)).stages[0].status).toBe('pending');
  });

  it('keeps every rollback when many stages and rollbacks run at once', async () => {
    const ramps = await Promise.all(Array.from({ length: 12 }, () => rampingFlag()));
    const outcomes = await Promise.all(
      ramps.map(async ({ flag, schedule }) => {
        const [advance, back] = await Promise.all([
          post(`${SCHEDULES}/stages/${schedule.stages[0].id}/advance`, dev),
          rollback(flag.id),
        ]);
        return { flag, schedule, advance: advance.statusCode, back: back.statusCode };
      }),
    );
    for (const { flag, schedule, advance, back } of outcomes) {
      expect(back).toBe(200);
      expect([200, 409]).toContain(advance);
      // Whichever came first, the rollback has the last word on the flag and leaves the schedule paused.
      expect(await readFlag(flag.id)).toMatchObject({ rollout_percentage: 0, is_active: false });
      const after = await readSchedule(schedule.id);
      expect(after.status).toBe('paused');
      expect(after.stages[0].status).toBe(advance === 200 ? 'applied' : 'pending');
    }
  });
});
