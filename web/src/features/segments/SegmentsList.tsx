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
  const segments = useSegments(status || undefined);
  return (
    <section>
      <PageHeader title="Segments" actions={permissions.canChangeSegments && <Link className="button" to="/segments/new">New segment</Link>} />
      <div className="toolbar">
        <StatusFilter value={status} statuses={['active', 'inactive', 'archived'] as const} onChange={setStatus} />
      </div>
      {segments.isPending ? (
        <Loading rows={4} label="Loading segments" />
      ) : segments.isError ? (
        <ErrorBox error={segments.error} />
      ) : segments.data.length === 0 ? (
        <Empty title="No segments yet.">Segments are reusable audiences: rules on user attributes, or an uploaded list of user IDs.</Empty>
      ) : (
        <DataTable headers={['Name', 'Kind', 'Status']}>
          {segments.data.map((s) => (
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
