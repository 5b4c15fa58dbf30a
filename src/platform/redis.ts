import { Redis } from 'ioredis';

/** One ioredis connection with a key prefix (tests isolate themselves by prefix). */
export function connectRedis(url: string, keyPrefix: string): Redis {
  const client = new Redis(url, { keyPrefix, maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: false });
  // Errors surface on the commands that fail; the connection itself reconnects on its own.
  client.on('error', () => undefined);
  return client;
}

export type { Redis };
