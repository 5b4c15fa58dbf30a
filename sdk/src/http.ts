/** HTTP for the clients: one place for the base URL, the API key header, errors, Retry-After and backoff. */

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

/** A refusal from the service: the status and its `detail`. */
export class UpliftError extends Error {
  override readonly name = 'UpliftError';
  constructor(
    readonly status: number,
    readonly detail: unknown,
    /** Milliseconds the service asked to wait (Retry-After), when it did. */
    readonly retryAfterMs?: number,
  ) {
    super(`Uplift answered ${status}${typeof detail === 'string' ? `: ${detail}` : ''}`);
  }
}

/** 429 and 5xx are worth another try (later); other statuses will answer the same again. */
export function isRetryable(error: unknown): boolean {
  return !(error instanceof UpliftError) || error.status === 429 || error.status >= 500;
}

/** Retry-After as seconds or an HTTP date, in milliseconds from now (undefined when absent or unreadable). */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

const BACKOFF_BASE_MS = 1000;
const BACKOFF_MAX_MS = 30_000;

/**
 * The wait before retry number `attempt` (0 = first retry): exponential from 1 s to 30 s with jitter (between half
 * and all of it, so clients that failed together do not retry together), and never less than a Retry-After.
 */
export function backoffMs(attempt: number, error?: unknown, random: () => number = Math.random): number {
  const ceiling = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.min(attempt, 16));
  const jittered = ceiling * (0.5 + random() / 2);
  const asked = error instanceof UpliftError ? error.retryAfterMs : undefined;
  return asked === undefined ? jittered : Math.max(asked, jittered);
}

/** A timer that does not keep a Node process alive (an SDK must not hold its host open) and that `cancel` ends. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    (timer as { unref?: () => void }).unref?.();
    signal?.addEventListener('abort', done, { once: true });
  });
}

export interface HttpOptions {
  baseUrl: string;
  apiKey: string;
  fetch?: FetchLike;
}

export class Http {
  readonly base: string;
  private readonly fetchImpl: FetchLike;

  constructor(private readonly options: HttpOptions) {
    if (!options.baseUrl) throw new TypeError('baseUrl is required');
    if (!options.apiKey) throw new TypeError('apiKey is required');
    this.base = `${options.baseUrl.replace(/\/+$/, '')}/api/v1`;
    const fetchImpl = options.fetch ?? (globalThis.fetch as FetchLike | undefined);
    if (!fetchImpl) throw new TypeError('no fetch: pass options.fetch on runtimes without a global fetch');
    this.fetchImpl = fetchImpl;
  }

  /** Sends a request; resolves with the response when it is 2xx or 304, throws UpliftError otherwise. */
  async send(method: string, path: string, init: { body?: unknown; headers?: Record<string, string>; signal?: AbortSignal } = {}): Promise<Response> {
    const headers: Record<string, string> = { 'X-API-Key': this.options.apiKey, Accept: 'application/json', ...init.headers };
    if (init.body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await this.fetchImpl(this.base + path, {
      method,
      headers,
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      signal: init.signal,
    });
    if ((res.status >= 200 && res.status < 300) || res.status === 304) return res;
    const text = await res.text().catch(() => '');
    let detail: unknown = text;
    try {
      detail = (JSON.parse(text) as { detail?: unknown }).detail ?? text;
    } catch {
      // Not JSON (a proxy's page): the text is the detail.
    }
    throw new UpliftError(res.status, detail, retryAfterMs(res.headers.get('retry-after')));
  }

  async json<T>(method: string, path: string, body?: unknown): Promise<T> {
    return (await (await this.send(method, path, { body })).json()) as T;
  }
}
