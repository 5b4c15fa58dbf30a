import { describe, expect, it } from 'vitest';
import { metricDefinition } from '../../test/fixtures';
import { bodyOf, cappingLabel, describeDefinition, draftOf, draftProblems, emptyDraft, quantileLabel, ratioLabel, type DefinitionDraft } from './draft';

const draft = (patch: Partial<DefinitionDraft>): DefinitionDraft => ({ ...emptyDraft(), name: 'Metric', ...patch });

describe('metric definition drafts', () => {
  it("asks, in words, for each kind's own fields only", () => {
    expect(draftProblems(draft({ kind: 'proportion' }))).toEqual({ event_name: 'This field is required.' });
    expect(draftProblems(draft({ kind: 'ratio' }))).toEqual({ 'numerator.event_name': 'This field is required.', 'denominator.event_name': 'This field is required.' });
    expect(draftProblems(draft({ kind: 'quantile', event_name: 'load', quantile: '1' }))).toEqual({ quantile: 'Enter a number between 0 and 1 (not 0 or 1), e.g. 0.9 for p90.' });
    expect(draftProblems(draft({ kind: 'quantile', event_name: 'load', quantile: '' }))).toEqual({ quantile: 'This field is required.' });
    expect(draftProblems(draft({ name: ' ', kind: 'proportion', event_name: 'buy' }))).toEqual({ name: 'This field is required.' });
    expect(draftProblems(draft({ kind: 'proportion', event_name: 'buy' }))).toBeNull();
  });

  it('checks the capping field of the chosen type, and only for mean and ratio', () => {
    expect(draftProblems(draft({ kind: 'mean', event_name: 'revenue', capping: 'absolute', cap_value: '0' }))).toEqual({ 'capping.value': 'Enter a cap above 0.' });
    expect(draftProblems(draft({ kind: 'mean', event_name: 'revenue', capping: 'absolute', cap_value: '' }))).toEqual({ 'capping.value': 'This field is required.' });
    expect(draftProblems(draft({ kind: 'mean', event_name: 'revenue', capping: 'percentile', cap_p: '99' }))).toEqual({ 'capping.p': 'Enter a number between 0 and 1 (not 0 or 1), e.g. 0.999.' });
    expect(draftProblems(draft({ kind: 'quantile', event_name: 'load', capping: 'absolute', cap_value: '' }))).toBeNull();
  });

  it('refuses more than 20 tags or a tag over 50 characters', () => {
    const many = Array.from({ length: 21 }, (_, i) => `t${i}`).join(', ');
    expect(draftProblems(draft({ kind: 'proportion', event_name: 'buy', tags: many }))).toEqual({ tags: 'Use at most 20 tags.' });
    expect(draftProblems(draft({ kind: 'proportion', event_name: 'buy', tags: 'x'.repeat(51) }))).toEqual({ tags: 'Keep each tag to at most 50 characters.' });
  });

  it("sends the kind's fields, capping only where it applies, and leaves an empty owner to the server on create", () => {
    expect(bodyOf(draft({ kind: 'quantile', event_name: ' load_time ', aggregate: 'sum', quantile: '0.9', capping: 'absolute', cap_value: '5', tags: 'speed, , speed, web' }), false)).toEqual({
      name: 'Metric',
      kind: 'quantile',
      description: null,
      event_name: 'load_time',
      aggregate: 'sum',
      quantile: 0.9,
      higher_is_better: true,
      tags: ['speed', 'web'],
    });
    expect(
      bodyOf(draft({ kind: 'ratio', numerator: { event_name: 'revenue', aggregate: 'sum' }, denominator: { event_name: 'purchase', aggregate: 'count' }, capping: 'percentile', cap_p: '0.99', owner: 'Growth' }), false),
    ).toMatchObject({ numerator: { event_name: 'revenue', aggregate: 'sum' }, denominator: { event_name: 'purchase', aggregate: 'count' }, capping: { type: 'percentile', p: 0.99 }, owner: 'Growth' });
    const edit = bodyOf(draft({ kind: 'mean', event_name: 'revenue', aggregate: 'sum' }), true);
    expect(edit).toMatchObject({ kind: 'mean', event_name: 'revenue', aggregate: 'sum', capping: { type: 'none' }, owner: null });
    expect(edit).not.toHaveProperty('numerator');
  });

  it('reads a stored definition back into the form unchanged', () => {
    const stored = metricDefinition({ kind: 'mean', event_name: 'revenue', aggregate: 'sum', numerator: null, denominator: null, capping: { type: 'absolute', value: 500 }, owner: 'Ann' });
    expect(bodyOf(draftOf(stored), true)).toEqual({
      name: stored.name,
      kind: 'mean',
      description: null,
      event_name: 'revenue',
      aggregate: 'sum',
      capping: { type: 'absolute', value: 500 },
      higher_is_better: true,
      tags: ['revenue'],
      owner: 'Ann',
    });
  });

  it('says what a definition measures in words', () => {
    expect(quantileLabel(0.9)).toBe('p90');
    expect(quantileLabel(0.999)).toBe('p99.9');
    expect(quantileLabel(0.5)).toBe('p50');
    expect(ratioLabel({ event_name: 'revenue', aggregate: 'sum' }, { event_name: 'purchase', aggregate: 'count' })).toBe('revenue per purchase');
    expect(ratioLabel({ event_name: 'click', aggregate: 'count' }, { event_name: 'basket', aggregate: 'sum' })).toBe('click events per basket value');
    expect(describeDefinition(metricDefinition({ kind: 'quantile', event_name: 'load_time', aggregate: 'sum', quantile: 0.9 }))).toBe('p90 of load_time (value sum per user)');
    expect(describeDefinition(metricDefinition({ kind: 'proportion', event_name: 'purchase' }))).toBe('share of users with purchase');
    expect(cappingLabel({ type: 'percentile', p: 0.999 })).toBe('capped at the pooled p99.9');
    expect(cappingLabel({ type: 'absolute', value: 500 })).toBe('capped at 500 per user');
    expect(cappingLabel({ type: 'none' })).toBeNull();
  });
});
