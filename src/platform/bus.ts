import { EventEmitter } from 'node:events';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Redis } from 'ioredis';

/**
 * Cross-process notifications (cache invalidation, live audit stream). A message is delivered to local
 * subscribers at once, synchronously with publish, and to every other API process through Redis pub/sub when
 * configured, else Postgres LISTEN/NOTIFY; embedded PGlite is single-process, so local delivery is complete.
 */
export interface Bus {
  publish(channel: string, message: string): Promise<void>;
  subscribe(channel: string, handler: (message: string) => void): () => void;
  close(): Promise<void>;
}

interface Envelope {
  origin: string;
  message: string;
}

class LocalBus implements Bus {
  protected readonly emitter = new EventEmitter().setMaxListeners(0);
  protected readonly origin = randomUUID();

  async publish(channel: string, message: string): Promise<void> {
    this.emitter.emit(channel, message);
  }

  subscribe(channel: string, handler: (message: string) => void): () => void {
    this.emitter.on(channel, handler);
    return () => this.emitter.off(channel, handler);
  }

  /** Delivers a message that arrived from another process. */
  protected deliverRemote(channel: string, raw: string): void {
    try {
      const envelope = JSON.parse(raw) as Envelope;
      if (envelope.origin !== this.origin) this.emitter.emit(channel, envelope.message);
    } catch {
      // A foreign message on our channel is ignored.
    }
  }

  protected envelope(message: string): string {
    return JSON.stringify({ origin: this.origin, message } satisfies Envelope);
  }

  async close(): Promise<void> {
    this.emitter.removeAllListeners();
  }
}

class RedisBus extends LocalBus {
  constructor(
    private readonly publisher: Redis,
    private readonly subscriber: Redis,
    private readonly namespace: string,
  ) {
    super();
    subscriber.on('message', (full: string, raw: string) => {
      if (full.startsWith(namespace)) this.deliverRemote(full.slice(namespace.length), raw);
    });
    // A SUBSCRIBE refused while Redis was down is issued again once the connection is back.
    subscriber.on('ready', () => {
      for (const channel of this.emitter.eventNames()) this.listen(String(channel));
    });
  }

  /**
   * Local subscribers always get the message; other processes get it when Redis answers. An outage loses only the
   * remote copy (each process's caches then expire by their TTL), never the caller's request or the process.
   */
  override async publish(channel: string, message: string): Promise<void> {
    await super.publish(channel, message);
    await this.publisher.publish(this.namespace + channel, this.envelope(message)).catch(() => undefined);
  }

  override subscribe(channel: string, handler: (message: string) => void): () => void {
    if (this.emitter.listenerCount(channel) === 0) this.listen(channel);
    return super.subscribe(channel, handler);
  }

  private listen(channel: string): void {
    this.subscriber.subscribe(this.namespace + channel).catch(() => undefined);
  }

  override async close(): Promise<void> {
    await super.close();
    this.subscriber.disconnect();
  }
}

class PostgresBus extends LocalBus {
  private readonly listening = new Set<string>();
  private ready: Promise<void>;

  constructor(
    private readonly client: pg.Client,
    private readonly pool: { query(text: string, params: unknown[]): Promise<unknown> },
    private readonly namespace: string,
  ) {
    super();
    client.on('notification', (n) => {
      if (n.channel.startsWith(namespace) && n.payload) this.deliverRemote(n.channel.slice(namespace.length), n.payload);
    });
    client.on('error', () => undefined);
    this.ready = client.connect().then(() => undefined);
  }

  override async publish(channel: string, message: string): Promise<void> {
    await super.publish(channel, message);
    await this.pool.query('SELECT pg_notify($1, $2)', [this.namespace + channel, this.envelope(message)]);
  }

  override subscribe(channel: string, handler: (message: string) => void): () => void {
    if (!this.listening.has(channel)) {
      this.listening.add(channel);
      const name = (this.namespace + channel).replace(/"/g, '');
      this.ready = this.ready.then(() => this.client.query(`LISTEN "${name}"`)).then(() => undefined, () => undefined);
    }
    return super.subscribe(channel, handler);
  }

  /** Resolves once every LISTEN issued so far is in force (tests wait on it before publishing elsewhere). */
  whenListening(): Promise<void> {
    return this.ready;
  }

  override async close(): Promise<void> {
    await super.close();
    await this.client.end().catch(() => undefined);
  }
}

export interface BusOptions {
  namespace: string;
  redis?: { publisher: Redis; subscriber: Redis };
  postgres?: { connectionString: string; query(text: string, params: unknown[]): Promise<unknown> };
}

export function createBus(options: BusOptions): Bus {
  if (options.redis) return new RedisBus(options.redis.publisher, options.redis.subscriber, options.namespace);
  if (options.postgres) {
    const client = new pg.Client({ connectionString: options.postgres.connectionString });
    return new PostgresBus(client, options.postgres, options.namespace);
  }
  return new LocalBus();
}
