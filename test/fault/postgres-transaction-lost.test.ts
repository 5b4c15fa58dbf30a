import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase, queryRows, type Database } from '../../src/db/client.js';
import { directQuery, tcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

/**
 * A transaction's connection lost under it (PostgreSQL restarting), through a proxy this test owns: the transaction
 * fails, nothing is thrown outside it (an uncaught error fails this file), and the pool still closes, which it never
 * did when a client was lost before its BEGIN answered. Needs TEST_DATABASE_URL.
 */
const URL_ = process.env.TEST_DATABASE_URL;

describe.runIf(Boolean(URL_))('PostgreSQL connection lost in a transaction', () => {
  const schema = `t_txlost_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  let proxy: TcpProxy;

  const admin = (text: string) => directQuery(URL_!, text);

  beforeAll(async () => {
    await admin(`CREATE SCHEMA ${schema}`);
    const target = new URL(URL_!);
    proxy = await tcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  });
  afterAll(async () => {
    await proxy?.close();
    await admin(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  });

  const connect = () => connectDatabase({ databaseUrl: proxy.url(URL_!), searchPath: `${schema},public`, poolSize: 1 });

  it('before BEGIN answers: the transaction fails and the pool still closes', async () => {
    await proxy.start();
    const database: Database = await connect();
    await database.db.execute(sql`SELECT 1`); // the pool's one client, idle and reused below
    const stopping = proxy.stop(); // cuts the connection; the client hears of it only after BEGIN is sent
    const failed = await database.db.transaction(async (tx) => tx.execute(sql`SELECT 1`)).then(() => false, () => true);
    await stopping;
    expect(failed).toBe(true);
    await proxy.start();
    expect(await queryRows(database.db, sql`SELECT 1 AS one`)).toEqual([{ one: 1 }]);
    await database.close();
  });

  it('between two statements: the next one fails, no error escapes, and the pool recovers and closes', async () => {
    await proxy.start();
    const database: Database = await connect();
    const failed = await database.db.transaction(async (tx) => {
      await tx.execute(sql`SELECT 1`);
      await proxy.stop();
      // The client's connection ends while no statement of it runs.
      await new Promise((resolve) => setImmediate(resolve));
      await tx.execute(sql`SELECT 2`);
    }).then(() => false, () => true);
    expect(failed).toBe(true);
    await proxy.start();
    expect(await queryRows(database.db, sql`SELECT 1 AS one`)).toEqual([{ one: 1 }]);
    await database.close();
  });
});
