import { useId } from 'react';
import type { Environment } from './hooks';
import { chooseEnvironment, useSelectedEnvironment } from './hooks';

/** The environment's colour as a small dot beside its name (no colour: none). */
export function EnvironmentName({ environment }: { environment: Pick<Environment, 'name' | 'color'> }) {
  return (
    <span className="environment-name">
      {environment.color && <span className="environment-dot" style={{ background: environment.color }} aria-hidden="true" />}
      {environment.name}
    </span>
  );
}

/** Chooses which environment the flag pages read and change; shown once there is more than one. */
export function EnvironmentSwitcher() {
  const { all, selected, several } = useSelectedEnvironment();
  const id = useId();
  if (!several || !selected) return null;
  return (
    <span className="environment-switcher">
      <label htmlFor={id}>Environment</label>
      <select id={id} value={selected.key} onChange={(e) => chooseEnvironment(e.target.value)}>
        {all.map((environment) => (
          <option key={environment.key} value={environment.key}>
            {environment.name}
            {environment.is_default ? ' (default)' : ''}
          </option>
        ))}
      </select>
    </span>
  );
}
