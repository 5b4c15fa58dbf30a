import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * Unsent bytes a stream may hold for a client that reads too slowly. Past it the socket is dropped (ending would
 * queue behind what the client is not reading, and keep its buffer): the client reconnects with Last-Event-ID.
 */
export const STREAM_MAX_BUFFER_BYTES = 8 << 20;

export interface EventStreamOptions {
  /** A comment line (`: heartbeat`) is written this often; an idle proxy keeps the connection and a client hears it. */
  heartbeatSeconds: number;
  /** The reconnection delay the client is told (`retry:`), written ahead of the first event. */
  retryMs: number;
  /** Defaults to STREAM_MAX_BUFFER_BYTES (the SDK stream passes config.sdkStreamMaxBufferBytes, the same by default). */
  maxBufferBytes?: number;
  /** Counted against this owner (an account, an API key) for `heldBy`. */
  owner?: string;
  /** Runs on each heartbeat before its comment is written; it may end the stream (the comment is then not sent). */
  onHeartbeat?: () => void;
  /** Runs once when the stream ends, whatever ended it (the client, `end`, a full buffer, the server closing). */
  onEnd?: () => void;
}

export interface EventStream {
  /** The Last-Event-ID the client sent (EventSource sends it on reconnect), as text. */
  readonly lastEventId: string | undefined;
  readonly ended: boolean;
  /** Writes event-stream text as it is; nothing once ended. */
  write(text: string): void;
  /** Ends the response; `drop` destroys the socket instead (its unsent buffer is not waited for). */
  end(how?: { drop?: boolean }): void;
}

/** The open event streams of one plugin: their count, per owner, and their end when the server closes. */
export interface EventStreams {
  readonly size: number;
  heldBy(owner: string): number;
  /**
   * Takes over the response and writes the event-stream head. Headers set by hooks (request id, CORS, rate limit)
   * are kept: the reply object does not send this response, so they are copied from it.
   */
  open(req: FastifyRequest, reply: FastifyReply, options: EventStreamOptions): EventStream;
}

/** Open streams never end by themselves: they are ended on the server's preClose so it can close. */
export function eventStreams(app: FastifyInstance): EventStreams {
  const open = new Set<EventStream>();
  const perOwner = new Map<string, number>();
  app.addHook('preClose', async () => {
    for (const stream of open) stream.end();
  });

  return {
    get size() {
      return open.size;
    },
    heldBy: (owner) => perOwner.get(owner) ?? 0,
    open(req, reply, options) {
      const maxBufferBytes = options.maxBufferBytes ?? STREAM_MAX_BUFFER_BYTES;
      const { owner } = options;
      if (owner !== undefined) perOwner.set(owner, (perOwner.get(owner) ?? 0) + 1);
      reply.hijack();
      const res: ServerResponse = reply.raw;
      res.writeHead(200, {
        ...(reply.getHeaders() as OutgoingHttpHeaders),
        'Content-Type': 'text/event-stream; charset=utf-8',
        'Cache-Control': 'no-cache, no-transform',
        Connection: 'keep-alive',
        'X-Accel-Buffering': 'no',
        'X-Request-ID': req.id,
      });
      const lastEventId = req.headers['last-event-id'];
      let ended = false;
      const stream: EventStream = {
        lastEventId: typeof lastEventId === 'string' ? lastEventId : undefined,
        get ended() {
          return ended;
        },
        write(text) {
          if (ended || res.writableEnded) return;
          res.write(text);
          if (res.writableLength > maxBufferBytes) stream.end({ drop: true });
        },
        end(how = {}) {
          if (ended) return;
          ended = true;
          clearInterval(heartbeat);
          open.delete(stream);
          if (owner !== undefined) {
            const left = (perOwner.get(owner) ?? 1) - 1;
            if (left > 0) perOwner.set(owner, left);
            else perOwner.delete(owner);
          }
          options.onEnd?.();
          if (how.drop) res.destroy();
          else if (!res.writableEnded) res.end();
        },
      };
      const heartbeat = setInterval(() => {
        options.onHeartbeat?.();
        stream.write(': heartbeat\n\n');
      }, options.heartbeatSeconds * 1000);
      open.add(stream);
      res.on('close', () => stream.end());
      res.write(`retry: ${options.retryMs}\n`);
      return stream;
    },
  };
}
