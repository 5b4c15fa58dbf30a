import { useState } from 'react';
import { Link } from '../../router';
import { Badge, Empty, ErrorBox, Loading, PageHeader, StatusFilter, dateTime } from '../../components/ui';
import { useSession } from '../auth/session';
import { useExperiments, type ExperimentListQuery, type ExperimentStatus } from './hooks';
import { STATUS_TONE } from './lifecycle';

const STATUSES: ExperimentStatus[] = ['draft', 'active', 'paused', 'completed', 'archived'];
type SortBy = NonNullable<ExperimentListQuery['sort_by']>;
const SORTS: Array<[SortBy, string]> = [
  ['created_at', 'Created'],
  ['updated_at', 'Updated'],
  ['name', 'Name'],
  ['status', 'Status'],
  ['start_date', 'Start date'],
];

export function ExperimentsList() {
  const { permissions } = useSession();
  const [status, setStatus] = useState<ExperimentStatus | ''>('');
  const [search, setSearch] = useState('');
  const [sortBy, setSortBy] = useState<SortBy>('created_at');
  const [sortOrder, setSortOrder] = useState<'asc' | 'desc'>('desc');
  const query: ExperimentListQuery = {
    sort_by: sortBy,
    sort_order: sortOrder,
    skip: 0,
    limit: 200,
    ...(status ? { status_filter: status } : {}),
    ...(search.trim() ? { search: search.trim() } : {}),
  };
  const experiments = useExperiments(query);
  const toggleSort = (column: SortBy) => {
    if (column === sortBy) setSortOrder(sortOrder === 'asc' ? 'desc' : 'asc');
    else {
      setSortBy(column);
      setSortOrder(column === 'name' || column === 'status' ? 'asc' : 'desc');
    }
  };
  const sortHeader = (column: SortBy, label: string) => (
    <th aria-sort={sortBy === column ? (sortOrder === 'asc' ? 'ascending' : 'descending') : 'none'}>
      <button type="button" className="sort" onClick={() => toggleSort(column)}>
        {label} {sortBy === column ? (sortOrder === 'asc' ? '▲' : '▼') : ''}
      </button>
    </th>
  );
  return (
    <section>
      <PageHeader
        title="Experiments"
        actions={permissions.canChange && <Link className="button" to="/experiments/new">New experiment</Link>}
      />
      <div className="toolbar" role="search">
        <label>
          <span className="visually-hidden">Search experiments</span>
          <input type="search" placeholder="Search name, key or description" value={search} onChange={(e) => setSearch(e.target.value)} />
        </label>
        <StatusFilter value={status} statuses={STATUSES} onChange={setStatus} />
        <label>
          <span className="visually-hidden">Sort by</span>
          <select value={sortBy} onChange={(e) => setSortBy(e.target.value as SortBy)} aria-label="Sort by">
            {SORTS.map(([value, text]) => (
              <option key={value} value={value}>
                Sort: {text}
              </option>
            ))}
          </select>
        </label>
      </div>
      {experiments.isPending ? (
        <Loading rows={5} label="Loading experiments" />
      ) : experiments.isError ? (
        <ErrorBox error={experiments.error} />
      ) : experiments.data.length === 0 ? (
        <Empty title={search || status ? 'No experiment matches these filters.' : 'No experiments yet.'}>
          {permissions.canChange && !search && !status && <Link to="/experiments/new">Create your first experiment</Link>}
        </Empty>
      ) : (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                {sortHeader('name', 'Name')}
                <th>Key</th>
                {sortHeader('status', 'Status')}
                <th>Type</th>
                <th>Variants</th>
                {sortHeader('start_date', 'Started')}
                {sortHeader('created_at', 'Created')}
              </tr>
            </thead>
            <tbody>
              {experiments.data.map((e) => (
                <tr key={e.id}>
                  <td>
                    <Link to={`/experiments/${e.id}`}>{e.name}</Link>
                  </td>
                  <td>
                    <code>{e.key}</code>
                  </td>
                  <td>
                    <Badge tone={STATUS_TONE[e.status]}>{e.status}</Badge>
                  </td>
                  <td>{e.experiment_type}</td>
                  <td>{e.variants.length}</td>
                  <td>{dateTime(e.start_date)}</td>
                  <td>{dateTime(e.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
