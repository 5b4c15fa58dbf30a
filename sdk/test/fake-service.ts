import type { FetchLike } from '../src/http.js';
import type { Ruleset } from '../src/types.js';

/** What the SDK sent: method, path (after /api/v1), headers and parsed body. */
export interface Sent {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: unknown;
  /** The request's abort signal (streams end with it). */
  signal?: AbortSignal;
}

type Handler = (req: Sent) => Response | Promise<Response>;

/**
 * A fake Uplift service behind a fetch function: routes answer from handlers the test sets, every request is
 * recorded, and `waitFor` resolves when a matching request has arrived (no sleeps).
 */
export class FakeService {
  readonly sent: Sent[] = [];
  private readonly handlers = new Map<string, Handler>();
  private readonly waiters: Array<{ match: (r: Sent) => boolean; resolve: (r: Sent) => void }> = [];

  on(method: string, path: string, handler: Handler): this {
    this.handlers.set(`${method} ${path}`, handler);
    return this;
  }

  /** The next request (already received or to come) matching method and path, after `after` of them. */
  waitFor(method: string, path: string, after = 0): Promise<Sent> {
    const match = (r: Sent) => r.method === method && r.path === path;
    const seen = this.sent.filter(match);
    if (seen.length > after) return Promise.resolve(seen[after]);
    let count = seen.length;
    return new Promise((resolve) => this.waiters.push({ match: (r) => match(r) && count++ >= after, resolve }));
  }

  readonly fetch: FetchLike = async (url, init = {}) => {
    const { pathname, search } = new URL(url);
    const path = pathname.replace(/^\/api\/v1/, '') + search;
    const headers = Object.fromEntries(Object.entries((init.headers ?? {}) as Record<string, string>).map(([k, v]) => [k.toLowerCase(), v]));
    const req: Sent = { method: init.method ?? 'GET', path, headers, body: init.body ? JSON.parse(init.body as string) : undefined };
    this.sent.push(req);
    for (const w of [...this.waiters]) {
      if (w.match(req)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(req);
      }
    }
    const handler = this.handlers.get(`${req.method} ${pathname.replace(/^\/api\/v1/, '')}`);
    if (!handler) return json(404, { detail: 'Not Found' });
    const signal = init.signal;
    if (!signal) return handler(req);
    // As fetch does: an abort rejects a request still waiting for its answer.
    return new Promise<Response>((resolve, reject) => {
      const abort = () => reject(new DOMException('aborted', 'AbortError'));
      if (signal.aborted) return abort();
      signal.addEventListener('abort', abort, { once: true });
      Promise.resolve(handler({ ...req, signal } as Sent)).then(resolve, reject);
    });
  };
}

export const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

/** A Server-Sent Events response whose chunks the test pushes; `end` closes it. */
export function eventStream(signal?: AbortSignal | null) {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
  const encoder = new TextEncoder();
  signal?.addEventListener('abort', () => {
    try {
      controller.error(new DOMException('aborted', 'AbortError'));
    } catch {
      // already closed
    }
  });
  return {
    response: new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } }),
    push: (text: string) => controller.enqueue(encoder.encode(text)),
    end: () => controller.close(),
  };
}

export function ruleset(flags: Array<Partial<Ruleset['flags'][number]> & { key: string }>, segments: Ruleset['segments'] = []): Ruleset {
  return {
    bucketing: { name: 'murmur3_32', version: 1 },
    flags: flags.map((f, i) => ({
      id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      status: 'active',
      is_active: true,
      rollout_percentage: 100,
      targeting_rules: null,
      default_value: false,
      ...f,
    })),
    segments,
  };
}
