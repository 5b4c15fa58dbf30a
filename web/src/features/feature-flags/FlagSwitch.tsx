import type { Flag } from './hooks';
import { useSetFlagActive } from './hooks';

/** The on/off switch of a flag; archived flags cannot be turned on, and roles that cannot change flags see it read-only. */
export function FlagSwitch({ flag, canChange }: { flag: Flag; canChange: boolean }) {
  const toggle = useSetFlagActive();
  const archived = flag.status === 'archived';
  return (
    <span className="switch-wrap">
      <label className="switch">
        <input
          type="checkbox"
          role="switch"
          checked={flag.is_active}
          disabled={!canChange || archived || toggle.isPending}
          aria-label={`${flag.name} is ${flag.is_active ? 'on' : 'off'}`}
          onChange={(e) => toggle.mutate({ id: flag.id, on: e.target.checked })}
        />
        <span aria-hidden="true">{flag.is_active ? 'On' : 'Off'}</span>
      </label>
      {toggle.isError && (
        <span className="field-error" role="alert">
          {toggle.error.message}
        </span>
      )}
    </span>
  );
}
