import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render } from '@testing-library/react';
import type { ReactNode } from 'react';
import { RouterProvider } from '../router';
import { ToastProvider } from '../components/toast';
import { SessionProvider } from '../features/auth/session';

/**
 * Component-test helpers. The fetch stub itself must be installed with `vi.hoisted` in each test file, before the
 * API client is imported (the client captures fetch when it is created).
 */
export const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

/** A routing table for the fetch stub: the first `[method, path-regex, answer]` that matches a request answers it. */
export type Route = [method: string, path: RegExp, answer: (request: Request) => Response | Promise<Response>];
export function router(routes: Route[]) {
  return async (request: Request | undefined): Promise<Response> => {
    if (!(request instanceof Request)) return json(404, { detail: 'Not a request' });
    const url = new URL(request.url);
    for (const [method, path, answer] of routes) {
      if (request.method === method && path.test(url.pathname)) return answer(request);
    }
    return json(404, { detail: `No stub for ${request.method} ${url.pathname}` });
  };
}

/** A signed-in session for the SessionProvider: the token it reads at start, and `/auth/me` answers with this. */
export function signedInAs(role: 'ADMIN' | 'DEVELOPER' | 'ANALYST' | 'VIEWER' = 'DEVELOPER', token = 'test-token') {
  window.localStorage.setItem('uplift.token', token);
  return { id: '00000000-0000-4000-8000-000000000001', username: 'dev', email: 'dev@example.com', full_name: 'Dev', role, is_superuser: false, is_active: true };
}

export function renderWithProviders(ui: ReactNode, client = new QueryClient({ defaultOptions: { queries: { retry: false } } })) {
  return {
    client,
    ...render(
      <QueryClientProvider client={client}>
        <RouterProvider>
          <ToastProvider>
            <SessionProvider>{ui}</SessionProvider>
          </ToastProvider>
        </RouterProvider>
      </QueryClientProvider>,
    ),
  };
}
