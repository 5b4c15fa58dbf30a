import { useEffect, type ReactNode } from 'react';
import { Loading } from './components/ui';
import { Link, matchPath, useRouter } from './router';
import { SignIn } from './features/auth/SignIn';
import { useSession } from './features/auth/session';
import { ExperimentDetail } from './features/experiments/ExperimentDetail';
import { ExperimentEdit } from './features/experiments/ExperimentEdit';
import { ExperimentForm } from './features/experiments/ExperimentForm';
import { ExperimentsList } from './features/experiments/ExperimentsList';
import { FlagPage, NewFlag } from './features/feature-flags/FlagPage';
import { FlagsList } from './features/feature-flags/FlagsList';
import { NewSegment, SegmentPage } from './features/segments/SegmentPage';
import { SegmentsList } from './features/segments/SegmentsList';
import { ApiKeys } from './features/api-keys/ApiKeys';
import { AuditLog } from './features/audit-logs/AuditLog';
import { Users } from './features/admin-users/Users';
import { Notifications } from './features/notifications/Notifications';
import { ExperimentHistory, FlagHistory } from './features/history/pages';
import { Environments } from './features/environments/Environments';
import { MetricDefinitionPage, NewMetricDefinition } from './features/metric-definitions/MetricDefinitionForm';
import { MetricLibrary } from './features/metric-definitions/MetricLibrary';

interface Route {
  pattern: string;
  render(params: Record<string, string>): ReactNode;
  /** Shown only when the account may use it; the API refuses the rest anyway. */
  allowed?: (p: ReturnType<typeof useSession>['permissions']) => boolean;
}

const ROUTES: Route[] = [
  { pattern: '/experiments', render: () => <ExperimentsList /> },
  { pattern: '/experiments/new', render: () => <ExperimentForm />, allowed: (p) => p.canChange },
  { pattern: '/experiments/:id', render: ({ id }) => <ExperimentDetail key={id} id={id} /> },
  { pattern: '/experiments/:id/history', render: ({ id }) => <ExperimentHistory key={id} id={id} /> },
  { pattern: '/experiments/:id/edit', render: ({ id }) => <ExperimentEdit key={id} id={id} />, allowed: (p) => p.canChange },
  { pattern: '/flags', render: () => <FlagsList /> },
  { pattern: '/flags/new', render: () => <NewFlag />, allowed: (p) => p.canChange },
  { pattern: '/flags/:id', render: ({ id }) => <FlagPage key={id} id={id} /> },
  { pattern: '/flags/:id/history', render: ({ id }) => <FlagHistory key={id} id={id} /> },
  { pattern: '/metrics', render: () => <MetricLibrary /> },
  { pattern: '/metrics/new', render: () => <NewMetricDefinition />, allowed: (p) => p.canChangeMetrics },
  { pattern: '/metrics/:id', render: ({ id }) => <MetricDefinitionPage key={id} id={id} /> },
  { pattern: '/segments', render: () => <SegmentsList /> },
  { pattern: '/segments/new', render: () => <NewSegment />, allowed: (p) => p.canChangeSegments },
  { pattern: '/segments/:id', render: ({ id }) => <SegmentPage key={id} id={id} /> },
  { pattern: '/audit', render: () => <AuditLog /> },
  { pattern: '/environments', render: () => <Environments /> },
  { pattern: '/api-keys', render: () => <ApiKeys /> },
  { pattern: '/users', render: () => <Users />, allowed: (p) => p.isSuperuser },
  { pattern: '/notifications', render: () => <Notifications /> },
];

const NAV: Array<{ to: string; label: string; allowed?: Route['allowed'] }> = [
  { to: '/experiments', label: 'Experiments' },
  { to: '/flags', label: 'Feature flags' },
  { to: '/metrics', label: 'Metric library' },
  { to: '/segments', label: 'Segments' },
  { to: '/audit', label: 'Audit log' },
  { to: '/environments', label: 'Environments' },
  { to: '/api-keys', label: 'API keys' },
  { to: '/users', label: 'Users', allowed: (p) => p.isSuperuser },
  { to: '/notifications', label: 'Notifications' },
];

export function App() {
  const session = useSession();
  const { path, navigate } = useRouter();
  useEffect(() => {
    if (session.token && (path === '/' || path === '/signin')) navigate('/experiments', { replace: true });
  }, [session.token, path, navigate]);
  if (!session.token) return <SignIn />;
  if (session.loading || !session.me) return <Loading rows={4} label="Signing in" />;

  let page: ReactNode = <NotFound />;
  for (const route of ROUTES) {
    const params = matchPath(route.pattern, path);
    if (params) {
      page = !route.allowed || route.allowed(session.permissions) ? route.render(params) : <NotAllowed />;
      break;
    }
  }
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Link to="/experiments" className="brand">
          Uplift
        </Link>
        <nav aria-label="Main">
          <ul>
            {NAV.filter((item) => !item.allowed || item.allowed(session.permissions)).map((item) => (
              <li key={item.to}>
                <Link to={item.to} aria-current={path === item.to || path.startsWith(`${item.to}/`) ? 'page' : undefined}>
                  {item.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div className="account">
          <span title={session.me.email ?? undefined}>
            {session.me.full_name ?? session.me.username} · {session.me.is_superuser ? 'superuser' : (session.me.role ?? 'VIEWER').toLowerCase()}
          </span>
          <button type="button" className="link" onClick={session.signOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {page}
      </main>
    </div>
  );
}

function NotFound() {
  return (
    <section>
      <h1>Page not found</h1>
      <p>
        <Link to="/experiments">Back to experiments</Link>
      </p>
    </section>
  );
}

function NotAllowed() {
  return (
    <section>
      <h1>Not available for your role</h1>
      <p>Ask an administrator for access.</p>
    </section>
  );
}
