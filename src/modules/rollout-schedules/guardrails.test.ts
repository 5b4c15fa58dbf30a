import { describe, expect, it } from 'vitest';
import type { RolloutGuardrailDecisionRow, RolloutStageRow } from '../../db/schema/rollout-schedules.js';
import { MAX_GUARDRAIL_WINDOW_MS, windowsFor } from './guardrails.js';

const DAY = 24 * 60 * 60_000;
const applied = new Date('2030-01-10T00:00:00Z');
const stages = [{ id: 's1', appliedAt: applied } as RolloutStageRow];
const at = (ms: number) => new Date(applied.getTime() + ms);

describe('windowsFor: one growing window per stage', () => {
  it('grows from the stage start with a baseline of the same length before it', () => {
    expect(windowsFor(stages, [], at(2 * DAY))?.windows).toEqual({
      exposedFrom: applied, exposedTo: at(2 * DAY), baselineFrom: at(-2 * DAY), baselineTo: applied,
    });
    expect(windowsFor(stages, [], applied)).toBeNull();
  });

  it('stops at 7 days: later looks see the same window instead of one sliding on (a new test at every look)', () => {
    const week = windowsFor(stages, [], at(MAX_GUARDRAIL_WINDOW_MS))?.windows;
    expect(week).toEqual({ exposedFrom: applied, exposedTo: at(7 * DAY), baselineFrom: at(-7 * DAY), baselineTo: applied });
    for (const later of [7 * DAY + 60_000, 30 * DAY, 180 * DAY]) expect(windowsFor(stages, [], at(later))?.windows).toEqual(week);
  });

  it('starts again after a rollback, for 7 days from it', () => {
    const rollback = [{ decision: 'rollback', createdAt: at(3 * DAY) } as RolloutGuardrailDecisionRow];
    expect(windowsFor(stages, rollback, at(20 * DAY))?.windows).toMatchObject({ exposedFrom: at(3 * DAY), exposedTo: at(10 * DAY) });
  });
});
