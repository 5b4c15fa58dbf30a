import { useState } from 'react';
import { Badge, DataTable, Empty, ErrorBox, Loading, PageHeader, StatusFilter } from '../../components/ui';
import { Link } from '../../router';
import { useSession } from '../auth/session';
import { useSegments } from './hooks';

type Status = 'active' | 'inactive' | 'archived';
export const SEGMENT_TONE: Record<Status, string> = { active: 'success', inactive: 'neutral', archived: 'muted' };

export function SegmentsList() {
  const { permissions } = useSession();
  const [status, setStatus] = useState<Status | ''>('');
  const [search, setSearch] = useState('');
  const segments = useSegments(status || undefined);
  // The list route has no search parameter; the page holds up to 500 segments, searched here by name.
  const needle = search.trim().toLowerCase();
  const shown = (segments.data ?? []).filter((s) => !needle || s.name.toLowerCase().includes(needle) || (s.description ?? '').toLowerCase().includes(needle));
  return (
    <section>
      <PageHeader title="Segments" actions={permissions.canChangeSegments && <Link className="button" to="/segments/new">New segment</Link>} />
      <div className="toolbar" role="search">
        <label>
          <span className="visually-hidden">Search segments</span>
          <input type="search" placeholder="Search by name" value={search} onChange={(e) => setSearch(e.target.value)} />
        </label>
        <StatusFilter value={status} statuses={['active', 'inactive', 'archived'] as const} onChange={setStatus} />
      </div>
      {segments.isPending ? (
        <Loading rows={4} label="Loading segments" />
      ) : segments.isError ? (
        <ErrorBox error={segments.error} />
      ) : shown.length === 0 && (needle || status) ? (
        <Empty title="No segment matches these filters." />
      ) : shown.length === 0 ? (
        <Empty title="No segments yet.">Segments are reusable audiences: rules on user attributes, or an uploaded list of user IDs.</Empty>
      ) : (
        <DataTable headers={['Name', 'Kind', 'Status']}>
          {shown.map((s) => (
            <tr key={s.id}>
              <td>
                <Link to={`/segments/${s.id}`}>{s.name}</Link>
              </td>
              <td>{s.kind === 'id_list' ? 'ID list' : 'Rules'}</td>
              <td>
                <Badge tone={SEGMENT_TONE[s.status as Status]}>{s.status}</Badge>
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}
