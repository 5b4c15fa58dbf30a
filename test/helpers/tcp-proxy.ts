import net from 'node:net';
import pg from 'pg';

/**
 * A TCP proxy a test owns, between the app and a shared server (PostgreSQL, Redis): `stop()` is an outage (the port
 * refuses connections and open ones are cut), `start()` the server coming back on the same port. The real server is
 * never touched.
 */
export interface TcpProxy {
  port: number;
  /** `scheme://host:port/...` of the target rewritten to point at the proxy. */
  url(targetUrl: string): string;
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function tcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let server: net.Server | undefined;
  let port = 0;

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const s = net.createServer((client) => {
        const upstream = net.connect(target.port, target.host);
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on('close', () => sockets.delete(socket));
          socket.on('error', () => undefined);
        }
        client.pipe(upstream).on('close', () => client.destroy());
        upstream.pipe(client).on('close', () => upstream.destroy());
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      });
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => {
        port = (s.address() as net.AddressInfo).port;
        server = s;
        resolve();
      });
    });

  const stop = async () => {
    const s = server;
    server = undefined;
    for (const socket of sockets) socket.destroy();
    sockets.clear();
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  };

  await listen();
  return {
    get port() {
      return port;
    },
    url(targetUrl) {
      const u = new URL(targetUrl);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    stop,
    start: () => (server ? Promise.resolve() : listen()),
    close: stop,
  };
}

/** Calls `check` until it stops throwing (the state it waits for has arrived), giving up after `attempts`. */
export async function eventually<T>(check: () => Promise<T>, attempts = 200, pauseMs = 50): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await check();
    } catch (error) {
      if (i >= attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  }
}

/** One statement on a connection of its own, straight to the server (not through a proxy): a test's setup and checks. */
export async function directQuery(url: string, text: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end();
  }
}
