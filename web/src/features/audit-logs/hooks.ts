import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { api, toApiError, unwrap } from '../../api/client';
import type { paths } from '../../api/schema.gen';
// The SDK's event-stream parser, shared from its source (one parser for both clients).
import { SseParser } from '../../../../sdk/src/sse';

export type AuditQuery = NonNullable<paths['/api/v1/audit-logs/']['get']['parameters']['query']>;
export type AuditPage = paths['/api/v1/audit-logs/']['get']['responses']['200']['content']['application/json'];
export type AuditEntry = AuditPage['items'][number];

export function useAuditLogs(query: AuditQuery) {
  return useQuery({
    queryKey: ['audit-logs', query],
    queryFn: () => unwrap(api.GET('/api/v1/audit-logs/', { params: { query } })),
    placeholderData: (previous) => previous,
  });
}

export type StreamState = 'connecting' | 'live' | 'reconnecting' | 'off';

/**
 * The live audit stream (SSE over fetch, since EventSource cannot send the bearer token). New entries are put at
 * the head of the first page's cache; a dropped connection resumes after the last id seen (Last-Event-ID).
 */
export function useAuditStream(
  enabled: boolean,
  filters: { action?: string; entity_type?: string },
  firstPageKey: unknown[],
): { state: StreamState; error: Error | null } {
  const client = useQueryClient();
  const [state, setState] = useState<StreamState>(enabled ? 'connecting' : 'off');
  const [error, setError] = useState<Error | null>(null);
  const keyJson = JSON.stringify(firstPageKey);
  const filtersJson = JSON.stringify(filters);
  useEffect(() => {
    if (!enabled) {
      setState('off');
      return;
    }
    const controller = new AbortController();
    let lastId: string | undefined;
    let attempt = 0;
    const run = async () => {
      while (!controller.signal.aborted) {
        try {
          setState(attempt === 0 ? 'connecting' : 'reconnecting');
          const { data, response } = await api.GET('/api/v1/audit-logs/stream', {
            params: { query: JSON.parse(filtersJson) as { action?: string; entity_type?: string } },
            parseAs: 'stream',
            signal: controller.signal,
            headers: lastId ? { 'Last-Event-ID': lastId } : {},
          });
          if (!response.ok || !data) throw toApiError(response.status, await response.json().catch(() => null));
          setState('live');
          setError(null);
          attempt = 0;
          const reader = data.pipeThrough(new TextDecoderStream()).getReader();
          const parser = new SseParser((message) => {
            if (message.id) lastId = message.id;
            const entry = JSON.parse(message.data) as AuditEntry;
            client.setQueryData<AuditPage>(JSON.parse(keyJson) as unknown[], (page) =>
              page && !page.items.some((e) => e.id === entry.id) ? { ...page, items: [entry, ...page.items], total: page.total + 1 } : page,
            );
          });
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            parser.push(value);
          }
        } catch (failure) {
          if (controller.signal.aborted) return;
          if ((failure as { status?: number }).status === 401 || (failure as { status?: number }).status === 403) {
            setError(failure as Error);
            setState('off');
            return;
          }
        }
        attempt += 1;
        setState('reconnecting');
        await new Promise((resolve) => setTimeout(resolve, Math.min(30_000, 1000 * 2 ** Math.min(attempt, 5))));
      }
    };
    void run();
    return () => controller.abort();
  }, [enabled, keyJson, filtersJson, client]);
  return { state, error };
}
