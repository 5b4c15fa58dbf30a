import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** The real entry point as a child process on port 0: SIGTERM lets requests in flight finish before it exits. */
describe('SIGTERM drains in-flight requests', () => {
  const dir = mkdtempSync(join(tmpdir(), 'uplift-drain-'));
  let child: ChildProcess;
  let base: string;
  let output = '';
  let exited: Promise<number | null>;

  beforeAll(async () => {
    child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: {
        ...process.env, DATABASE_URL: '', REDIS_URL: '', PORT: '0', HOST: '127.0.0.1', DATA_DIR: dir, LOG_LEVEL: 'info',
        RATE_LIMIT_ENABLED: 'false', FIRST_SUPERUSER_EMAIL: 'drain@example.com', FIRST_SUPERUSER_PASSWORD: 'Dr4in-password', BCRYPT_ROUNDS: '4',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
    base = await new Promise<string>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
        if (match) resolve(match[1]);
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.on('exit', () => reject(new Error(`server exited: ${output.slice(-2000)}`)));
    });
  }, 60_000);
  afterAll(() => {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('finishes a request whose body is still arriving, refuses new connections, then exits 0', async () => {
    const login = await fetch(`${base}/api/v1/auth/login`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'drain@example.com', password: 'Dr4in-password' }),
    });
    const token = ((await login.json()) as { access_token: string }).access_token;
    const keyRes = await fetch(`${base}/api/v1/api-keys`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ name: 'drain' }),
    });
    const key = ((await keyRes.json()) as { key: string }).key;

    const body = JSON.stringify({ event_type: 'drain', user_id: 'u1' });
    const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = http.request(`${base}/api/v1/tracking/track`, {
        method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-api-key': key },
      }, (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      req.write(body.slice(0, 10));
      // The signal arrives once the server has the request (its log says so) and while the body is half sent.
      const received = () => /incoming request[^\n]*tracking\/track|tracking\/track[^\n]*incoming request/.test(output);
      const closing = () => output.includes('shutting down');
      const signal = () => (received() ? child.kill('SIGTERM') && finish() : setTimeout(signal, 10));
      const finish = () => (closing() ? req.end(body.slice(10)) : setTimeout(finish, 10));
      signal();
    });
    const { status, text } = await answer;
    expect(status, text).toBe(200);
    expect(JSON.parse(text)).toMatchObject({ event_name: 'drain' });
    await expect(fetch(`${base}/health`)).rejects.toThrow();
    expect(await exited).toBe(0);
  }, 60_000);
});
