import { useState } from 'react';
import { FormError, Select } from '../../components/form';
import { useToast } from '../../components/toast';
import type { Environment } from '../environments/hooks';
import { useCopyFlagState, type Flag } from './hooks';

/**
 * "Copy to environment": promotes this flag's state (on/off, rollout, targeting rules, what a typed flag serves) from
 * one environment to another, after a confirmation, in one transaction on the server.
 */
export function CopyToEnvironment({ flag, environments, selected }: { flag: Flag; environments: Environment[]; selected?: string }) {
  const copy = useCopyFlagState();
  const toast = useToast();
  const first = selected ?? environments.find((e) => e.is_default)?.key ?? environments[0]?.key ?? '';
  const [from, setFrom] = useState(first);
  const [to, setTo] = useState(environments.find((e) => e.key !== first)?.key ?? '');
  const nameOf = (key: string) => environments.find((e) => e.key === key)?.name ?? key;
  const options = environments.map((e) => [e.key, e.name] as const);
  const same = from === to;
  const submit = () => {
    if (same || !window.confirm(`Copy “${flag.name}” from ${nameOf(from)} to ${nameOf(to)}? Its state in ${nameOf(to)} is replaced.`)) return;
    copy.mutate({ id: flag.id, from, to }, { onSuccess: () => toast.show(`Copied “${flag.name}” from ${nameOf(from)} to ${nameOf(to)}.`) });
  };
  return (
    <section className="card" aria-labelledby="copy-environment-title">
      <h2 id="copy-environment-title">Copy to environment</h2>
      <p className="hint">Replaces the target's on/off state, rollout, targeting rules and served variations with the source's.</p>
      <div className="copy-environment">
        <Select label="From" value={from} options={options} onChange={(e) => setFrom(e.target.value)} />
        <Select label="To" value={to} options={options} error={same ? 'Choose another environment than the source.' : undefined} onChange={(e) => setTo(e.target.value)} />
        <button type="button" onClick={submit} disabled={same || copy.isPending}>
          {copy.isPending ? 'Copying…' : 'Copy'}
        </button>
      </div>
      <FormError error={copy.error} />
    </section>
  );
}
