import { useState } from 'react';
import { Badge, DataTable, Empty, ErrorBox, Loading, PageHeader, dateTime } from '../../components/ui';
import { useAuditLogs, useAuditStream, type AuditEntry, type AuditQuery } from './hooks';

const PAGE = 50;
const STATE_TEXT = { connecting: 'Connecting…', live: 'Live', reconnecting: 'Reconnecting…', off: 'Paused' } as const;

function summary(entry: AuditEntry): string {
  const parts: string[] = [];
  const before = entry.before ?? {};
  const after = entry.after ?? {};
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const a = JSON.stringify((before as Record<string, unknown>)[key]);
    const b = JSON.stringify((after as Record<string, unknown>)[key]);
    if (a !== b) parts.push(`${key}: ${a ?? '—'} → ${b ?? '—'}`);
  }
  if (parts.length === 0 && entry.details) parts.push(JSON.stringify(entry.details));
  const text = parts.join('; ');
  return text.length > 160 ? `${text.slice(0, 157)}…` : text;
}

/** The audit log: filters, pages, and new entries streamed in live at the top of the first page. */
export function AuditLog() {
  const [action, setAction] = useState('');
  const [entityType, setEntityType] = useState('');
  const [skip, setSkip] = useState(0);
  const [live, setLive] = useState(true);
  const filters = { ...(action.trim() ? { action: action.trim() } : {}), ...(entityType.trim() ? { entity_type: entityType.trim() } : {}) };
  const query: AuditQuery = { skip, limit: PAGE, ...filters };
  const logs = useAuditLogs(query);
  const stream = useAuditStream(live && skip === 0, filters, ['audit-logs', query]);
  return (
    <section>
      <PageHeader
        title="Audit log"
        actions={
          <label className="inline checkbox">
            <input type="checkbox" checked={live} onChange={(e) => setLive(e.target.checked)} /> Live updates{' '}
            <span className="stream-status" aria-live="polite">
              <Badge tone={stream.state === 'live' ? 'success' : stream.state === 'off' ? 'neutral' : 'warning'}>{skip > 0 && live ? 'first page only' : STATE_TEXT[stream.state]}</Badge>
            </span>
          </label>
        }
      />
      <div className="toolbar" role="search">
        <label>
          <span className="visually-hidden">Action</span>
          <input placeholder="Action, e.g. feature_flag_update" value={action} onChange={(e) => { setAction(e.target.value); setSkip(0); }} />
        </label>
        <label>
          <span className="visually-hidden">Entity type</span>
          <input placeholder="Entity type, e.g. feature_flag" value={entityType} onChange={(e) => { setEntityType(e.target.value); setSkip(0); }} />
        </label>
      </div>
      {stream.error && <ErrorBox error={stream.error} />}
      {logs.isPending ? (
        <Loading rows={6} label="Loading audit log" />
      ) : logs.isError ? (
        <ErrorBox error={logs.error} />
      ) : logs.data.items.length === 0 ? (
        <Empty title="No audit entries match." />
      ) : (
        <>
          <DataTable headers={['When', 'Who', 'Action', 'Entity', 'Change']} className="audit">
            {logs.data.items.map((entry) => (
              <tr key={entry.id}>
                <td>{dateTime(entry.created_at)}</td>
                <td>{entry.actor_username ?? 'system'}</td>
                <td>
                  <code>{entry.action}</code>
                </td>
                <td>
                  {entry.entity_type}
                  {entry.entity_id ? <span className="hint"> {entry.entity_id.slice(0, 8)}</span> : null}
                </td>
                <td className="wrap">{summary(entry)}</td>
              </tr>
            ))}
          </DataTable>
          <nav className="row pager" aria-label="Pages">
            <button type="button" className="secondary" disabled={skip === 0} onClick={() => setSkip(Math.max(0, skip - PAGE))}>
              Newer
            </button>
            <span>
              {skip + 1}–{Math.min(skip + PAGE, logs.data.total)} of {logs.data.total}
            </span>
            <button type="button" className="secondary" disabled={skip + PAGE >= logs.data.total} onClick={() => setSkip(skip + PAGE)}>
              Older
            </button>
          </nav>
        </>
      )}
    </section>
  );
}
