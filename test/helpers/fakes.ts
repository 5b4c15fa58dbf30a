import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';

/** Local stand-ins for what leaves the process: an SMTP server, HTTP receivers, and an SSE client. */

export interface ReceivedMail {
  from: string;
  to: string[];
  data: string;
}

/** A minimal SMTP server: accepts every message, except recipients whose address starts with `reject`. */
export async function startSmtpSink(): Promise<{ port: number; messages: ReceivedMail[]; close(): Promise<void> }> {
  const messages: ReceivedMail[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    let buffer = '';
    let inData = false;
    let current: ReceivedMail = { from: '', to: [], data: '' };
    const reply = (line: string) => socket.write(`${line}\r\n`);
    reply('220 sink ESMTP');
    socket.on('data', (chunk) => {
      buffer += chunk.toString('utf8');
      for (;;) {
        if (inData) {
          const end = buffer.indexOf('\r\n.\r\n');
          if (end < 0) return;
          current.data = buffer.slice(0, end);
          buffer = buffer.slice(end + 5);
          messages.push(current);
          current = { from: '', to: [], data: '' };
          inData = false;
          reply('250 queued');
          continue;
        }
        const eol = buffer.indexOf('\r\n');
        if (eol < 0) return;
        const line = buffer.slice(0, eol);
        buffer = buffer.slice(eol + 2);
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'EHLO' || verb === 'HELO') reply('250 sink');
        else if (verb === 'MAIL') {
          current.from = line.slice(10).replace(/[<>]/g, '');
          reply('250 ok');
        } else if (verb === 'RCPT') {
          const address = line.slice(8).replace(/[<>]/g, '').trim();
          if (address.startsWith('reject')) reply('550 mailbox unavailable');
          else {
            current.to.push(address);
            reply('250 ok');
          }
        } else if (verb === 'DATA') {
          inData = true;
          reply('354 go ahead');
        } else if (verb === 'QUIT') {
          reply('221 bye');
          socket.end();
        } else reply('250 ok');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    messages,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * An SMTP server that never finishes a conversation: `silent` accepts the connection and never greets, `mute` greets
 * and then never answers, `trickle` greets and answers EHLO one byte at a time, never ending the reply (so the socket
 * is never idle). `idle()` resolves once every connection it accepted has been closed (by the client).
 */
export async function startStalledSmtpServer(mode: 'silent' | 'mute' | 'trickle') {
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  let onIdle: (() => void) | undefined;
  const server = net.createServer((socket) => {
    accepted += 1;
    sockets.add(socket);
    let drip: NodeJS.Timeout | undefined;
    socket.on('error', () => undefined);
    // Reads (and ignores) what the client sends, so its closing the connection is seen.
    socket.resume();
    socket.on('close', () => {
      clearInterval(drip);
      sockets.delete(socket);
      if (sockets.size === 0) onIdle?.();
    });
    if (mode === 'silent') return;
    socket.write('220 stalled ESMTP\r\n');
    if (mode === 'mute') return;
    socket.once('data', () => {
      socket.write('250-stalled');
      drip = setInterval(() => socket.write('.'), 50);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    /** Connections accepted so far. */
    accepted: () => accepted,
    idle: () => (sockets.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => (onIdle = resolve))),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * An HTTP server whose answer per request comes from `respond`: a status and JSON body, or `hang` to never answer.
 */
export async function startHttpServer(
  respond: (request: ReceivedRequest) => { status: number; body?: unknown; headers?: Record<string, string> } | 'hang',
): Promise<{ url: string; requests: ReceivedRequest[]; close(): Promise<void> }> {
  const requests: ReceivedRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(request);
      const answer = respond(request);
      if (answer === 'hang') return;
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface SseEvent {
  id?: string;
  data?: string;
  comments: string[];
}

/** A real socket client of a server-sent-event stream; `next` waits for the first event (or comment) matching. */
export function openSse(url: string, headers: Record<string, string>) {
  const events: SseEvent[] = [];
  const waiters: Array<{ match(e: SseEvent): boolean; resolve(e: SseEvent): void }> = [];
  let status = 0;
  let contentType = '';
  let responseHeaders: http.IncomingHttpHeaders = {};
  let request: http.ClientRequest;
  const connected = new Promise<void>((resolve, reject) => {
    request = http.get(url, { headers }, (res) => {
      status = res.statusCode ?? 0;
      contentType = String(res.headers['content-type'] ?? '');
      responseHeaders = res.headers;
      res.setEncoding('utf8');
      let buffer = '';
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event: SseEvent = { comments: [] };
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) event.comments.push(line.slice(1).trim());
            else if (line.startsWith('id: ')) event.id = line.slice(4);
            else if (line.startsWith('data: ')) event.data = line.slice(6);
          }
          events.push(event);
          for (const waiter of [...waiters]) {
            if (waiter.match(event)) {
              waiters.splice(waiters.indexOf(waiter), 1);
              waiter.resolve(event);
            }
          }
          if (event.comments.includes('connected')) resolve();
        }
      });
      res.on('error', () => undefined);
    });
    request.on('error', reject);
  });
  return {
    connected,
    events,
    get status() {
      return status;
    },
    get contentType() {
      return contentType;
    },
    get headers() {
      return responseHeaders;
    },
    /** Entries received so far, parsed. */
    entries: (): Array<Record<string, unknown> & { id: number }> =>
      events.filter((e) => e.data).map((e) => ({ ...(JSON.parse(e.data!) as Record<string, unknown>), id: Number(e.id) })),
    next(match: (e: SseEvent) => boolean): Promise<SseEvent> {
      const seen = events.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => waiters.push({ match, resolve }));
    },
    close: () => request.destroy(),
  };
}

/** An event whose entry has this field value. */
export const entryWith = (field: string, value: unknown) => (e: SseEvent) =>
  e.data !== undefined && (JSON.parse(e.data) as Record<string, unknown>)[field] === value;

/**
 * Settings for an app whose ETL module talks to a fake Glue endpoint at `url`: test credentials, region and the job
 * `daily_rollup`, plus what a test adds (its crawlers, tables, timeouts).
 */
export const glueEnv = (url: string, more: Record<string, string>): Record<string, string> => ({
  ETL_GLUE_ENDPOINT: url,
  ETL_AWS_REGION: 'eu-west-1',
  AWS_ACCESS_KEY_ID: 'AKIDTEST',
  AWS_SECRET_ACCESS_KEY: 'secret',
  ETL_GLUE_JOBS: 'daily_rollup=uplift-daily-rollup',
  ...more,
});

/**
 * Every notification the services send, recorded in the returned list (and delivered as usual), so a test can
 * await none: `recordNotices(t.services)`.
 */
export function recordNotices(services: { notifications: unknown }): Array<{ kind: string; payload: Record<string, any> }> {
  const notices: Array<{ kind: string; payload: Record<string, any> }> = [];
  const notifications = services.notifications as { notify: (kind: string, payload: Record<string, any>) => Promise<unknown> };
  const notify = notifications.notify.bind(notifications);
  notifications.notify = (kind, payload) => {
    notices.push({ kind, payload });
    return notify(kind, payload);
  };
  return notices;
}
