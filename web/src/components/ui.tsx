import { useContext, type ReactNode } from 'react';
import { QueryClientContext } from '@tanstack/react-query';
import { ApiError, isUnreachable } from '../api/client';

/** A table in its scrolling wrapper: the column headers, an optional caption, and the rows (`<tr>` elements). */
export function DataTable({ headers, caption, className, children }: { headers: ReactNode[]; caption?: ReactNode; className?: string; children: ReactNode }) {
  return (
    <div className="table-wrap">
      <table className={className}>
        {caption !== undefined && <caption>{caption}</caption>}
        <thead>
          <tr>
            {headers.map((header, i) => (
              <th key={i}>{header}</th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

export function Badge({ tone, children }: { tone: string; children: ReactNode }) {
  return <span className={`badge badge-${tone}`}>{children}</span>;
}

/** Placeholder rows of the final height, so the page does not jump when data arrives. */
export function Loading({ rows = 3, label = 'Loading' }: { rows?: number; label?: string }) {
  return (
    <div className="loading" role="status" aria-live="polite">
      <span className="visually-hidden">{label}…</span>
      {Array.from({ length: rows }, (_, i) => (
        <div key={i} className="skeleton" />
      ))}
    </div>
  );
}

export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="empty">
      <p className="empty-title">{title}</p>
      {children}
    </div>
  );
}

/**
 * A failed read. When the API could not be reached (or failed on its side) it offers Retry, which reads again every
 * query on the page that failed, unless the caller passes its own `onRetry`.
 */
export function ErrorBox({ error, onRetry }: { error: unknown; onRetry?: () => unknown }) {
  const client = useContext(QueryClientContext);
  const transient = isUnreachable(error) || (error instanceof ApiError && (error.status >= 500 || error.status === 429));
  const retry = onRetry ?? (transient && client ? () => client.refetchQueries({ type: 'active', predicate: (q) => q.state.status === 'error' }) : undefined);
  return (
    <div className="alert alert-error alert-retry" role="alert">
      <p>{error instanceof Error ? error.message : 'Something went wrong.'}</p>
      {retry && (
        <button type="button" className="secondary" onClick={() => void retry()}>
          Retry
        </button>
      )}
    </div>
  );
}

/** "1 flag", "2 flags", "1,000 flags"; `many` for irregular plurals. */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count.toLocaleString()} ${count === 1 ? one : many}`;
}

export function PageHeader({ title, actions }: { title: string; actions?: ReactNode }) {
  return (
    <header className="page-header">
      <h1>{title}</h1>
      {actions && <div className="page-actions">{actions}</div>}
    </header>
  );
}

export const pct = (value: number | null | undefined, digits = 1): string =>
  value === null || value === undefined || !Number.isFinite(value) ? '—' : `${(value * 100).toFixed(digits)}%`;

export const num = (value: number | null | undefined, digits = 3): string =>
  value === null || value === undefined || !Number.isFinite(value) ? '—' : value.toFixed(digits);

export const pValue = (value: number | null | undefined): string =>
  value === null || value === undefined ? '—' : value < 0.0001 ? '< 0.0001' : value.toFixed(4);

export const dateTime = (iso: string | null | undefined): string => (iso ? new Date(iso).toLocaleString() : '—');

/** "just now", "3 minutes ago", "2 days ago": how long before `now` the moment was. */
export function timeAgo(iso: string, now = Date.now()): string {
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (seconds < 60) return 'just now';
  const steps: Array<[number, string]> = [[60, 'minute'], [3600, 'hour'], [86_400, 'day'], [2_592_000, 'month'], [31_536_000, 'year']];
  let unit = steps[0];
  for (const step of steps) if (seconds >= step[0]) unit = step;
  const count = Math.floor(seconds / unit[0]);
  return `${plural(count, unit[1])} ago`;
}

/** The status filter of a list page: "All statuses" (empty) or one of `statuses`, named as the API spells them. */
export function StatusFilter<S extends string>({ value, statuses, onChange }: { value: NoInfer<S> | ''; statuses: readonly S[]; onChange(next: NoInfer<S> | ''): void }) {
  return (
    <select aria-label="Filter by status" value={value} onChange={(e) => onChange(e.target.value as S | '')}>
      <option value="">All statuses</option>
      {statuses.map((s) => (
        <option key={s} value={s}>
          {s.charAt(0).toUpperCase() + s.slice(1).toLowerCase()}
        </option>
      ))}
    </select>
  );
}
