import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import { DataTable, Empty, ErrorBox, Loading, PageHeader, dateTime, plural } from '../../components/ui';
import { Link } from '../../router';
import { useSession } from '../auth/session';
import { useSegments } from '../segments/hooks';
import { actionText, fieldChanges } from './diff';

type EntityType = 'feature_flag' | 'experiment';
const PAGE = 200;

/** The audit entries of one entity, newest first (the audit-log API filtered by entity type and id). */
export function useEntityHistory(entityType: EntityType, entityId: string) {
  return useQuery({
    queryKey: ['audit-logs', 'entity', entityType, entityId],
    queryFn: () => unwrap(api.GET('/api/v1/audit-logs/', { params: { query: { entity_type: entityType, entity_id: entityId, skip: 0, limit: PAGE } } })),
  });
}

/** One flag's or experiment's history on its own page: who changed what, field by field. */
export function EntityHistory({ entityType, entityId, name, backTo }: { entityType: EntityType; entityId: string; name: string; backTo: string }) {
  const { permissions, me } = useSession();
  const history = useEntityHistory(entityType, entityId);
  // Targeting rules name segments by id: show their names.
  const segments = useSegments();
  const names = new Map((segments.data ?? []).map((s) => [s.id, `segment “${s.name}”`]));
  const seesAll = permissions.isAdmin || me?.role === 'ANALYST';
  return (
    <section>
      <PageHeader title={`History of ${name}`} actions={<Link className="button secondary" to={backTo}>Back</Link>} />
      {!seesAll && <p className="hint">Your role sees the changes you made; administrators and analysts see everyone’s.</p>}
      {history.isPending ? (
        <Loading rows={5} label="Loading history" />
      ) : history.isError ? (
        <ErrorBox error={history.error} />
      ) : history.data.items.length === 0 ? (
        <Empty title="No changes recorded yet." />
      ) : (
        <>
          <p className="hint">{plural(history.data.total, 'change')}, newest first.</p>
          <ol className="history">
            {history.data.items.map((entry) => {
              const changes = fieldChanges(entry.before, entry.after);
              return (
                <li key={entry.id} className="card history-entry">
                  <p className="history-head">
                    <strong>{actionText(entry.action, entityType)}</strong> by {entry.actor_username ?? 'the system'} · <time dateTime={entry.created_at}>{dateTime(entry.created_at)}</time>
                  </p>
                  {changes.length > 0 ? (
                    <DataTable headers={['Field', 'Before', 'After']} className="history-changes">
                      {changes.map((c) => (
                        <tr key={c.field}>
                          <th scope="row">{c.field}</th>
                          <td className="wrap">{names.get(c.before) ?? c.before}</td>
                          <td className="wrap">{names.get(c.after) ?? c.after}</td>
                        </tr>
                      ))}
                    </DataTable>
                  ) : (
                    <p className="hint">No field changed.</p>
                  )}
                </li>
              );
            })}
          </ol>
        </>
      )}
    </section>
  );
}
