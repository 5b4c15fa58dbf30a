import { Badge, ErrorBox, Loading, dateTime, pct } from '../../components/ui';
import { useSafetyCheck } from './hooks';

/** The flag's safety monitor as the automatic rollback sees it: error rate against the threshold in the window. */
export function SafetyStatus({ flagId }: { flagId: string }) {
  const check = useSafetyCheck(flagId);
  return (
    <section className="card" aria-labelledby="safety-title">
      <h2 id="safety-title">Safety</h2>
      {check.isPending ? (
        <Loading rows={2} label="Loading safety status" />
      ) : check.isError ? (
        <ErrorBox error={check.error} />
      ) : !check.data.enabled ? (
        <p className="hint">Safety monitoring is off for this flag.</p>
      ) : (
        <ul className="plain">
          <li>
            {check.data.threshold_exceeded ? <Badge tone="danger">threshold exceeded</Badge> : <Badge tone="success">healthy</Badge>}{' '}
            {check.data.would_roll_back && <Badge tone="warning">would roll back to {check.data.rollback_percentage}%</Badge>}
          </li>
          <li>
            Error rate {pct(check.data.error_rate, 2)} (threshold {pct(check.data.error_rate_threshold, 2)}) over the last {check.data.window_minutes} minutes ·{' '}
            {check.data.error_count} errors
            {check.data.uncounted_error_count ? `, ${check.data.uncounted_error_count} client reports not counted` : ''}
          </li>
          <li>Automatic rollback: {check.data.auto_rollback_enabled ? 'on' : 'off'} · last rollback {dateTime(check.data.last_rollback_at)}</li>
        </ul>
      )}
    </section>
  );
}
