import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
/** src/config.ts parses the settings, with the parsers of src/config/. */
const configSource = [read('src/config.ts'), ...readdirSync(new URL('../../src/config/', import.meta.url)).map((f) => read(`src/config/${f}`))].join('\n');
/** A setting exists when the config reads it from the environment (`env.NAME` or `env, 'NAME'`). */
const isSetting = (name: string) => new RegExp(`env\\.${name}\\b|env, '${name}'`).test(configSource);

interface ComposeService { image?: string; build?: unknown; environment?: Record<string, string>; ports?: string[] }
const compose = parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, ComposeService> };
const upliftServices = Object.entries(compose.services).filter(([, s]) => s.build !== undefined || s.image?.startsWith('uplift'));
const dockerfile = read('Dockerfile');

describe('container files', () => {
  it('the compose file runs two Uplift instances behind a proxy, with PostgreSQL and Redis', () => {
    expect(upliftServices.map(([name]) => name).sort()).toEqual(['uplift-1', 'uplift-2']);
    expect(Object.keys(compose.services)).toEqual(expect.arrayContaining(['postgres', 'redis', 'proxy']));
    const nginx = read('deploy/nginx.conf');
    for (const [name] of upliftServices) expect(nginx).toContain(`server ${name}:8000`);
    for (const [, service] of upliftServices) {
      expect(service.environment?.DATABASE_URL).toMatch(/^postgres:\/\/.+@postgres:5432\//);
      expect(service.environment?.REDIS_URL).toBe('redis://redis:6379');
    }
  });

  it('every setting the compose file gives Uplift exists in src/config.ts', () => {
    const names = new Set(upliftServices.flatMap(([, s]) => Object.keys(s.environment ?? {})));
    expect(names.size).toBeGreaterThan(3);
    expect([...names].filter((n) => !isSetting(n))).toEqual([]);
  });

  it('the operator must set every secret: compose refuses to start without it (${NAME:?message}), none is built in', () => {
    /** A value compose takes from the operator's environment, refusing to start while NAME is unset or empty. */
    const required = (value: string | undefined, name: string) => new RegExp(`^\\$\\{${name}:\\?[^}]+\\}$`).test(value ?? '');
    const isSecret = (setting: string) => /PASSWORD|TOKEN|SECRET|_KEY$/.test(setting);
    for (const [name, service] of upliftServices) {
      const env = service.environment ?? {};
      expect(env.ENVIRONMENT, name).toBe('production');
      for (const setting of ['SECRET_KEY', 'FIRST_SUPERUSER_PASSWORD', 'METRICS_TOKEN']) expect(required(env[setting], setting), `${name} ${setting}`).toBe(true);
      // The database password inside the URL too.
      const databasePassword = /^postgres:\/\/[^:@/]+:([^@]+)@/.exec(env.DATABASE_URL ?? '')?.[1];
      expect(required(databasePassword, 'POSTGRES_PASSWORD'), `${name} DATABASE_URL`).toBe(true);
    }
    for (const [name, service] of Object.entries(compose.services)) {
      for (const [setting, value] of Object.entries(service.environment ?? {})) {
        if (isSecret(setting)) expect(required(value, setting), `${name} ${setting}`).toBe(true);
      }
    }
  });

  it('every ENV of the Dockerfile is a setting in src/config.ts', () => {
    const names = [...dockerfile.matchAll(/^ENV (.+)$/gm)].flatMap((m) => [...m[1].matchAll(/([A-Z_][A-Z0-9_]*)=/g)].map((x) => x[1]));
    expect(names.length).toBeGreaterThan(0);
    expect(names.filter((n) => !isSetting(n))).toEqual([]);
  });

  it('the Dockerfile is multi-stage, installs production dependencies only, runs as a non-root user and checks /health', () => {
    expect(dockerfile.match(/^FROM /gm)?.length).toBeGreaterThanOrEqual(2);
    expect(dockerfile).toMatch(/^RUN npm ci --omit=dev/m);
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/^HEALTHCHECK .*\n?.*\/health/m);
    const node = /^FROM node:(\d+)/m.exec(dockerfile)?.[1];
    const engines = JSON.parse(read('package.json')).engines.node as string;
    expect(engines).toContain(`>=${node}`);
  });

  it('the health check asks the port the service listens on (PORT, default 8000)', async () => {
    const line = /^HEALTHCHECK [^\n]*\\\n\s*CMD (\[.*\])$/m.exec(dockerfile);
    expect(line).not.toBeNull();
    const [command, ...args] = JSON.parse(line![1]) as string[];
    expect(command).toBe('node');
    const server = createServer((req, res) => res.writeHead(req.url === '/health' && healthy ? 200 : 503).end());
    let healthy = true;
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    try {
      const port = String((server.address() as AddressInfo).port);
      const check = () => new Promise<number | null>((done) => execFile(process.execPath, args, { env: { ...process.env, PORT: port } }, (error) => done(error ? (error.code as number) : 0)));
      expect(await check()).toBe(0);
      healthy = false;
      expect(await check()).toBe(1);
    } finally {
      await new Promise((done) => server.close(done));
    }
  });

  it('both stages copy every workspace manifest before npm ci (npm ci needs them) and the image holds the dashboard', () => {
    const workspaces = JSON.parse(read('package.json')).workspaces as string[];
    for (const ws of workspaces) expect(dockerfile.match(new RegExp(`^COPY ${ws}/package.json \\./${ws}/$`, 'gm'))).toHaveLength(2);
    expect(dockerfile).toContain('COPY --from=build /app/web/dist ./web/dist');
  });

  it('the test that checks settings knows real ones from unknown ones', () => {
    expect(isSetting('DATABASE_URL')).toBe(true);
    expect(isSetting('DATABASE_URI')).toBe(false);
  });
});
