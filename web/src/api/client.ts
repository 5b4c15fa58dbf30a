import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './schema.gen';
import { humanMessage } from './messages';

/**
 * The one fetch layer: every call goes through `api` (typed from openapi/full.json) and `unwrap`, which turns an
 * error answer into an `ApiError` whose `fieldErrors` map a 422's `loc` to the form field it names.
 */
let token: string | null = null;
let onUnauthorized: () => void = () => undefined;

export function setToken(value: string | null): void {
  token = value;
}
export function setUnauthorizedHandler(handler: () => void): void {
  onUnauthorized = handler;
}

const auth: Middleware = {
  onRequest({ request }) {
    // Signing in again sends no (expired) token: a wrong password then stays a form error, not a lost session.
    const signingIn = new URL(request.url).pathname.endsWith('/auth/login');
    if (token && !signingIn && !request.headers.has('Authorization') && !request.headers.has('X-API-Key')) {
      request.headers.set('Authorization', `Bearer ${token}`);
    }
    return request;
  },
  onResponse({ response, request }) {
    if (response.status === 401 && request.headers.get('Authorization')) onUnauthorized();
    return response;
  },
};

export const api = createClient<paths>({ baseUrl: '' });
api.use(auth);

export interface ValidationIssue {
  type: string;
  loc: Array<string | number>;
  msg: string;
  ctx?: Record<string, unknown>;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Field path (body `loc` without its `body` head, dotted: `variants.0.name`) to the API's message. */
    readonly fieldErrors: Record<string, string> = {},
    readonly detail: unknown = undefined,
  ) {
    super(message);
  }
}

/** `body.variants.0.name` → `variants.0.name`; other locations keep their head (`query.sample_size`). */
export function fieldKey(loc: Array<string | number>): string {
  const parts = loc[0] === 'body' ? loc.slice(1) : loc;
  return parts.join('.');
}

export function toApiError(status: number, body: unknown): ApiError {
  const detail = (body as { detail?: unknown } | null)?.detail;
  if (Array.isArray(detail)) {
    const fieldErrors: Record<string, string> = {};
    for (const issue of detail as ValidationIssue[]) {
      const key = fieldKey(issue.loc ?? []);
      const msg = humanMessage(issue);
      fieldErrors[key] = fieldErrors[key] ? `${fieldErrors[key]} ${msg}` : msg;
    }
    return new ApiError(status, 'Some fields need attention.', fieldErrors, detail);
  }
  if (typeof detail === 'string') return new ApiError(status, detail, {}, detail);
  if (detail && typeof detail === 'object' && typeof (detail as { message?: unknown }).message === 'string') {
    return new ApiError(status, (detail as { message: string }).message, {}, detail);
  }
  if (status === 0) return new ApiError(0, UNREACHABLE);
  if (status === 429) return new ApiError(status, 'Too many requests. Wait a moment and try again.');
  return new ApiError(status, `The server answered ${status}.`, {}, detail);
}

/** What a fetch that never reached the API (server down, network gone) says instead of "Failed to fetch". */
export const UNREACHABLE = 'The API cannot be reached. Check your connection, or whether the Uplift server is running, then retry.';

/** Whether an error means the request never got an answer. */
export function isUnreachable(error: unknown): boolean {
  return error instanceof ApiError && error.status === 0;
}

/** Awaits the call; a fetch that throws (no answer at all) becomes an `ApiError` with status 0 and UNREACHABLE. */
async function settle<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (failure) {
    if (failure instanceof TypeError || (failure instanceof Error && /fetch|network/i.test(failure.message))) throw new ApiError(0, UNREACHABLE);
    throw failure;
  }
}

interface FetchResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/**
 * For the results routes, which answer 202 while an experiment's results are first computed: the 200 body, or an
 * `ApiError` (a 202 one while computing, so the query shows the API's message and retries).
 */
export async function unwrapComputed<T>(call: Promise<FetchResult<unknown>>): Promise<T> {
  const { data, error, response } = await settle(call);
  if (response.status === 202) throw toApiError(202, data ?? null);
  if (!response.ok) throw toApiError(response.status, error ?? null);
  return data as T;
}

/** The data of a successful call, or an `ApiError` thrown with the API's message and field errors. */
export async function unwrap<T>(call: Promise<FetchResult<T>>): Promise<T> {
  const { data, error, response } = await settle(call);
  if (!response.ok) throw toApiError(response.status, error ?? null);
  return data as T;
}
