import type { Environment } from '../environments/hooks';
import type { Flag } from './hooks';
import { useSetFlagActive } from './hooks';

/**
 * The on/off switch of a flag, in one environment when one is named (its state from the flag's `environments`) or
 * in the environment the flag was read in; archived flags cannot be turned on, and roles that cannot change flags
 * see it read-only.
 */
export function FlagSwitch({ flag, canChange, environment }: { flag: Flag; canChange: boolean; environment?: Pick<Environment, 'key' | 'name' | 'is_default'> }) {
  const toggle = useSetFlagActive();
  const state = (environment && flag.environments?.[environment.key]) || flag;
  const archived = state.status === 'archived';
  const where = environment ? ` in ${environment.name}` : '';
  const param = environment && !environment.is_default ? environment.key : undefined;
  return (
    <span className="switch-wrap">
      <label className="switch">
        <input
          type="checkbox"
          role="switch"
          checked={state.is_active}
          disabled={!canChange || archived || toggle.isPending}
          aria-label={`${flag.name} is ${state.is_active ? 'on' : 'off'}${where}`}
          onChange={(e) => toggle.mutate({ id: flag.id, on: e.target.checked, environment: param })}
        />
        <span aria-hidden="true">{state.is_active ? 'On' : 'Off'}</span>
      </label>
      {toggle.isError && (
        <span className="field-error" role="alert">
          {toggle.error.message}
        </span>
      )}
    </span>
  );
}
