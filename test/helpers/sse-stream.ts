import { SseParser, type SseEvent } from '../../sdk/src/sse.js';

/** A stream read through fetch: every event and comment line in arrival order; `next` waits for one matching. */
export async function openStream(url: string, headers: Record<string, string>) {
  const abort = new AbortController();
  const res = await fetch(url, { headers, signal: abort.signal });
  const events: SseEvent[] = [];
  const comments: string[] = [];
  const waiters: Array<() => void> = [];
  const parser = new SseParser((e) => events.push(e));
  const decoder = new TextDecoder();
  void (async () => {
    const reader = res.body!.getReader();
    for (;;) {
      const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (done) return;
      const text = decoder.decode(value, { stream: true });
      comments.push(...text.split('\n').filter((l) => l.startsWith(':')));
      parser.push(text);
      for (const w of waiters.splice(0)) w();
    }
  })();
  const until = async <T>(find: () => T | undefined): Promise<T> => {
    for (;;) {
      const found = find();
      if (found !== undefined) return found;
      await new Promise<void>((r) => waiters.push(r));
    }
  };
  return {
    res,
    /** Every event received so far, in arrival order. */
    events,
    next: (match: (e: SseEvent) => boolean) => until(() => events.find(match)),
    comment: (text: string) => until(() => comments.find((c) => c.includes(text))),
    close: () => abort.abort(),
  };
}
