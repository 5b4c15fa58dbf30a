import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useState } from 'react';
import { describe, expect, it } from 'vitest';
import { RuleBuilder, emptyRules, fromRules, toRules, type RulesDraft } from './rule-builder';

describe('rule conversion', () => {
  it('sends lists as arrays, numbers as numbers, no value for presence checks and segment ids under `segment`', () => {
    const draft: RulesDraft = {
      logical_operator: 'OR',
      groups: [
        {
          logical_operator: 'AND',
          conditions: [
            { attribute: 'country', operator: 'in', value: 'US, CA ,, GB' },
            { attribute: 'age', operator: 'gte', value: '18' },
            { attribute: 'email', operator: 'is_null', value: 'ignored' },
            { attribute: 'anything', operator: 'in_segment', value: 'seg-1' },
            { attribute: 'app_version', operator: 'semver_gte', value: '2.1.0' },
          ],
        },
      ],
    };
    expect(toRules(draft)).toEqual({
      logical_operator: 'OR',
      groups: [
        {
          logical_operator: 'AND',
          conditions: [
            { attribute: 'country', operator: 'in', value: ['US', 'CA', 'GB'] },
            { attribute: 'age', operator: 'gte', value: 18 },
            { attribute: 'email', operator: 'is_null' },
            { attribute: 'segment', operator: 'in_segment', value: 'seg-1' },
            { attribute: 'app_version', operator: 'semver_gte', value: '2.1.0' },
          ],
        },
      ],
    });
  });

  it('means no targeting when there are no groups, and reads stored rules back', () => {
    expect(toRules(emptyRules())).toBeNull();
    const stored = { logical_operator: 'AND', groups: [{ logical_operator: 'OR', conditions: [{ attribute: 'plan', operator: 'not_in', value: ['free', 'trial'] }] }] };
    expect(toRules(fromRules(stored))).toEqual(stored);
    expect(fromRules(null)).toEqual(emptyRules());
  });
});

function Harness({ segments }: { segments?: Array<{ id: string; name: string }> }) {
  const [rules, setRules] = useState<RulesDraft>(emptyRules());
  return (
    <>
      <RuleBuilder value={rules} onChange={setRules} segments={segments} error="targeting rules: at most 1000 groups and conditions are allowed" />
      <output data-testid="json">{JSON.stringify(toRules(rules))}</output>
    </>
  );
}

describe('<RuleBuilder>', () => {
  it('builds a group with a condition from the keyboard and shows the API message for the field', async () => {
    const user = userEvent.setup();
    render(<Harness segments={[{ id: 's1', name: 'Beta testers' }]} />);
    expect(screen.getByRole('alert').textContent).toContain('at most 1000 groups');
    await user.click(screen.getByRole('button', { name: '+ Add rule group' }));
    await user.type(screen.getByLabelText('Attribute'), 'country');
    await user.type(screen.getByLabelText('Value'), 'US');
    expect(JSON.parse(screen.getByTestId('json').textContent ?? '')).toEqual({
      logical_operator: 'AND',
      groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'country', operator: 'equals', value: 'US' }] }],
    });
    await user.selectOptions(screen.getByLabelText('Operator'), 'in_segment');
    await user.selectOptions(screen.getByLabelText('Segment'), 's1');
    expect(JSON.parse(screen.getByTestId('json').textContent ?? '').groups[0].conditions[0]).toEqual({ attribute: 'segment', operator: 'in_segment', value: 's1' });
  });

  it('offers every operator of the targeting engine, and no segment operators where segments are not allowed', async () => {
    const { OPERATORS } = await import('../../../src/targeting/types');
    const user = userEvent.setup();
    const { unmount } = render(<Harness segments={[]} />);
    await user.click(screen.getByRole('button', { name: '+ Add rule group' }));
    const all = Array.from((screen.getByLabelText('Operator') as HTMLSelectElement).options).map((o) => o.value);
    expect(all).toEqual([...OPERATORS]);
    unmount();
    render(<Harness />);
    await user.click(screen.getByRole('button', { name: '+ Add rule group' }));
    const some = Array.from((screen.getByLabelText('Operator') as HTMLSelectElement).options).map((o) => o.value);
    expect(some).not.toContain('in_segment');
    expect(some).not.toContain('not_in_segment');
    expect(some).toHaveLength(OPERATORS.length - 2);
  });
});
