/**
 * The CLI's HTTP client for a running Uplift: signs in once (token or email and password) and turns every non-2xx
 * answer into a CliError carrying the API's own message.
 */
export class CliError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message);
  }
}

export interface ApiOptions {
  url: string;
  token?: string;
  email?: string;
  password?: string;
  fetch?: typeof fetch;
}

export interface ApiClient {
  json<T>(method: string, path: string, body?: unknown): Promise<T>;
  text(path: string): Promise<string>;
}

/** `{detail: "..."}` or a 422 list becomes one readable line; anything else the status text. */
export function describeError(status: number, body: unknown): string {
  const detail = (body as { detail?: unknown } | undefined)?.detail;
  if (typeof detail === 'string') return `${status}: ${detail}`;
  if (Array.isArray(detail)) {
    const parts = detail.map((d: { loc?: unknown[]; msg?: string }) => `${(d.loc ?? []).join('.')}: ${d.msg ?? 'invalid'}`);
    return `${status}: ${parts.join('; ')}`;
  }
  return `${status}: request failed`;
}

export function createApiClient(options: ApiOptions): ApiClient {
  const fetchImpl = options.fetch ?? fetch;
  const base = options.url.replace(/\/+$/, '');
  let token = options.token;

  async function send(method: string, path: string, body?: unknown, auth = true): Promise<Response> {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (auth) headers.authorization = `Bearer ${await bearer()}`;
    let response: Response;
    try {
      response = await fetchImpl(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    } catch (error) {
      throw new CliError(`Cannot reach Uplift at ${base}: ${(error as Error).message}`);
    }
    if (!response.ok) {
      const parsed = await response.json().catch(() => undefined);
      throw new CliError(describeError(response.status, parsed));
    }
    return response;
  }

  async function bearer(): Promise<string> {
    if (token) return token;
    if (!options.email || !options.password) {
      throw new CliError('Not signed in: pass --token (or UPLIFT_TOKEN), or --email with UPLIFT_PASSWORD', 2);
    }
    const response = await send('POST', '/api/v1/auth/login', { email: options.email, password: options.password }, false);
    token = ((await response.json()) as { access_token: string }).access_token;
    return token;
  }

  return {
    async json<T>(method: string, path: string, body?: unknown): Promise<T> {
      return (await (await send(method, path, body)).json()) as T;
    },
    async text(path: string): Promise<string> {
      return (await send('GET', path)).text();
    },
  };
}
